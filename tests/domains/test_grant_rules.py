from proofgym import Claim, Outcome
from proofgym.domains.grant_rules import verify

GOOD = {"age": 34, "annual_income": 21000, "resident": True, "has_active_grant": False}


def test_eligible_applicant_is_permitted():
    verdict = verify(Claim("permit", GOOD))
    assert verdict.outcome is Outcome.CERTIFIED
    assert verdict.decision == "permit"
    assert all(rule["fired"] for rule in verdict.evidence["rules"])


def test_each_failing_rule_denies_and_is_named():
    cases = {
        "is_adult": {"age": 17},
        "income_within_threshold": {"annual_income": 30000.01},
        "is_resident": {"resident": False},
        "no_active_grant": {"has_active_grant": True},
    }
    for rule, change in cases.items():
        verdict = verify(Claim("deny", {**GOOD, **change}))
        assert verdict.decision == "deny", rule
        assert verdict.evidence["deciding_rules"] == [rule]


def test_boundaries_are_inclusive():
    assert verify(Claim(None, {**GOOD, "age": 18, "annual_income": 30000})).decision == "permit"


def test_fact_gate_rejects_and_refutes():
    bad = {**GOOD, "age": "34", "resident": 1, "pet": "cat", "annual_income": {"value": 100, "confidence": 0.5}}
    verdict = verify(Claim("permit", bad))
    assert verdict.outcome is Outcome.REFUTED and verdict.decision is None
    assert {r.field for r in verdict.rejected_facts} == {"age", "resident", "pet", "annual_income"}


def test_missing_fact_refutes():
    facts = dict(GOOD)
    del facts["has_active_grant"]
    verdict = verify(Claim("permit", facts))
    assert verdict.outcome is Outcome.REFUTED
    assert [r.field for r in verdict.rejected_facts] == ["has_active_grant"]


def test_confident_wrapped_facts_are_accepted():
    facts = {**GOOD, "age": {"value": 40, "confidence": 0.95}}
    assert verify(Claim("permit", facts)).decision == "permit"
