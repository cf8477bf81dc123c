"""Which rule decides: priorities, constraints that block, and the posture when no rule decides."""

import pytest

from proofgym.rules import load_rulebook, parse_rulebook

from kernel_helpers import GRANT, GRANT_OK, LOAN, LOAN_OK, prove


def rulebook(posture="deny", constraints=()):
    data = {
        "name": "decide",
        "decisions": ["gold", "silver", "none"],
        "posture": posture,
        "facts": {"score": {"type": "integer"}, "verified": {"type": "boolean", "required": False}},
        "constraints": list(constraints),
        "decision_rules": [  # file order is not priority order
            {"name": "silver_rule", "decide": "silver", "priority": 5,
             "when": {"fact": "score", "op": ">=", "value": 50}},
            {"name": "gold_rule", "decide": "gold", "priority": 9, "when": {"fact": "score", "op": ">=", "value": 90}},
            {"name": "none_rule", "decide": "none", "priority": -1, "when": {"fact": "score", "op": "<", "value": 10}},
        ],
    }
    if posture == "deny":
        data["default_decision"] = "none"
    return parse_rulebook(data)


VERIFIED = {"name": "verified_only", "require": {"fact": "verified", "op": "==", "value": True}, "blocks": ["gold"]}


def test_the_highest_priority_candidate_decides():
    proof = prove(rulebook(), {"score": 95})
    assert proof["candidates"] == ["gold_rule", "silver_rule"]
    assert proof["decision"] == {"status": "decided", "decision": "gold", "deciding_rules": ["gold_rule"],
                                 "by_default": False}


def test_a_failed_constraint_blocks_its_decisions_and_the_next_candidate_decides():
    proof = prove(rulebook(constraints=[VERIFIED]), {"score": 95, "verified": False})
    assert proof["constraints"] == [{"rule": "verified_only", "held": False, "blocks": ["gold"]}]
    assert proof["candidates"] == ["gold_rule", "silver_rule"]  # blocked candidates are listed too
    assert proof["decision"]["decision"] == "silver" and proof["decision"]["deciding_rules"] == ["silver_rule"]


def test_an_unknown_constraint_blocks_fail_closed():
    proof = prove(rulebook(constraints=[VERIFIED]), {"score": 95})
    assert proof["constraints"][0]["held"] is False
    assert proof["decision"]["decision"] == "silver"


def test_a_constraint_without_blocks_blocks_every_decision_and_deny_decides_by_default():
    everything = {"name": "verified_only", "require": {"fact": "verified", "op": "==", "value": True}}
    proof = prove(rulebook(constraints=[everything]), {"score": 95})
    assert proof["constraints"][0]["blocks"] == ["gold", "silver", "none"]
    # The posture's default is the fail-closed fallback: the constraint that blocked every candidate does not
    # block it, and it is named as the reason.
    assert proof["decision"] == {"status": "decided", "decision": "none", "deciding_rules": ["verified_only"],
                                 "by_default": True}


def test_only_constraints_that_blocked_a_candidate_are_named_when_deny_decides():
    unrelated = {"name": "unrelated", "require": {"fact": "score", "op": ">", "value": 1000}, "blocks": ["none"]}
    proof = prove(rulebook(constraints=[VERIFIED, unrelated]), {"score": 92})
    assert proof["decision"]["decision"] == "silver"
    blocks_both = {"name": "high_scores_need_review", "require": {"fact": "score", "op": "<", "value": 50},
                   "blocks": ["gold", "silver"]}
    proof = prove(rulebook(constraints=[unrelated, VERIFIED, blocks_both]), {"score": 92})
    assert proof["decision"] == {"status": "decided", "decision": "none",
                                 "deciding_rules": ["verified_only", "high_scores_need_review"], "by_default": True}


def test_deny_posture_with_no_candidate_decides_the_default_with_no_deciding_rule():
    proof = prove(rulebook(), {"score": 30})
    assert proof["candidates"] == []
    assert proof["decision"] == {"status": "decided", "decision": "none", "deciding_rules": [], "by_default": True}


def test_abstain_posture_with_no_candidate_is_indeterminate():
    proof = prove(rulebook("abstain"), {"score": 30})
    assert proof["decision"] == {"status": "indeterminate", "decision": None, "deciding_rules": [],
                                 "by_default": False}
    blocked = prove(rulebook("abstain", [VERIFIED]), {"score": 95, "verified": False})
    assert blocked["decision"]["decision"] == "silver"


def test_abstain_posture_with_every_candidate_blocked_is_indeterminate():
    proof = prove(rulebook("abstain", [dict(VERIFIED, blocks=["gold", "silver"])]), {"score": 95})
    assert proof["candidates"] == ["gold_rule", "silver_rule"]
    assert proof["decision"]["status"] == "indeterminate"


@pytest.mark.parametrize("facts, decision, deciding", [
    ({}, "permit", ["permit_eligible"]),
    ({"age": 17}, "deny", ["deny_minor"]),
    ({"annual_income": 30000.5}, "deny", ["deny_income"]),
    ({"resident": False}, "deny", ["deny_non_resident"]),
    ({"has_active_grant": True}, "deny", ["deny_active_grant"]),
    ({"age": 17, "resident": False}, "deny", ["deny_minor"]),
    ({"annual_income": 30000}, "permit", ["permit_eligible"]),
    ({"age": 18}, "permit", ["permit_eligible"]),
])
def test_grant_eligibility(facts, decision, deciding):
    outcome = prove(load_rulebook(GRANT), {**GRANT_OK, **facts})["decision"]
    assert (outcome["decision"], outcome["deciding_rules"]) == (decision, deciding)


@pytest.mark.parametrize("facts, decision", [
    ({}, "approve"),
    ({"employment_status": "retired"}, "refer"),  # approval blocked: no income source
    ({"employment_status": "retired", "co_signer": True}, "approve"),
    ({"annual_debt": 40000}, "decline"),
    ({"credit_band": "poor"}, "decline"),
    ({"credit_band": "fair"}, "refer"),
    ({"annual_income": 0}, "refer"),  # no ratio: risk stays at its default, medium
    ({"loan_amount": 30000}, "refer"),  # not affordable
])
def test_loan_approval(facts, decision):
    assert prove(load_rulebook(LOAN), {**LOAN_OK, **facts})["decision"]["decision"] == decision
