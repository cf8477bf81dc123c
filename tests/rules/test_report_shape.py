"""The kernel's report (docs/rulebooks.md, "The report")."""

import json

import pytest

from proofgym.rules import RuleKernel, load_rulebook

from kernel_helpers import GRANT, GRANT_OK, book

GRANT_RB = load_rulebook(GRANT)
REPORT_KEYS = {"decision", "status", "proof_checked", "proof_summary", "confidence", "certified_fact_summary",
               "rejected_facts", "symbolic_trace", "proof", "deciding_rules", "checker_problems"}
TRACE_KEYS = ["rule_id", "rule_name", "rule_type", "action_type", "required", "fired", "explanation"]


def json_round_trip(report):
    return json.loads(json.dumps(report, allow_nan=False))


def test_a_certified_decision():
    kernel = RuleKernel(GRANT_RB)
    assert kernel.hash == GRANT_RB.content_hash and kernel.rulebook is GRANT_RB
    report = kernel.query({**GRANT_OK, "age": {"value": 34, "confidence": 0.9}})
    assert json_round_trip(report) == report and set(report) == REPORT_KEYS
    assert (report["decision"], report["status"], report["proof_checked"]) == ("permit", "decided", True)
    assert report["proof_summary"] == ("Decision 'permit' independently certified by the proof checker: 5 rule(s)"
                                       " fired, 3 fact(s) derived from 4 input fact(s).")
    assert report["confidence"] == {"overall": 0.9, "symbolic": 1.0, "neural": None}
    assert report["certified_fact_summary"] == {"accepted": 4, "rejected": 0, "derived": 3}
    assert report["rejected_facts"] == [] and report["checker_problems"] == []
    assert report["deciding_rules"] == ["permit_eligible"]
    assert report["proof"]["decision"]["decision"] == "permit"
    assert report["proof"]["rulebook"] == {"name": "grant_eligibility", "hash": GRANT_RB.content_hash}


def test_the_trace_lists_every_rule_in_evaluation_order():
    trace = RuleKernel(GRANT_RB).query({**GRANT_OK, "age": 16})["symbolic_trace"]
    assert trace["rules_evaluated"] == 9 == len(trace["rules"])
    assert trace["rules_fired"] == sum(r["fired"] for r in trace["rules"]) == 3
    assert all(list(r) == TRACE_KEYS and r["rule_id"] == r["rule_name"] for r in trace["rules"])
    assert [(r["rule_name"], r["rule_type"], r["action_type"], r["required"], r["fired"]) for r in trace["rules"]] == [
        ("adult", "derive", "derive", False, False),
        ("income_within_threshold", "derive", "derive", False, True),
        ("all_criteria_met", "derive", "derive", False, False),
        ("no_second_grant", "constraint", "require", True, True),
        ("permit_eligible", "decision", "decide", False, False),
        ("deny_minor", "decision", "decide", False, True),
        ("deny_income", "decision", "decide", False, False),
        ("deny_non_resident", "decision", "decide", False, False),
        ("deny_active_grant", "decision", "decide", False, False),
    ]
    explanations = {r["rule_name"]: r["explanation"] for r in trace["rules"]}
    assert explanations["adult"] == "the applicant is 16, at least 18"
    assert explanations["no_second_grant"] == "an applicant holding an active grant (false) cannot get another"
    assert explanations["deny_minor"] == "the applicant is 16, under 18"


def test_explanations_render_unknown_values_booleans_numbers_and_literal_braces():
    rb = book("""
        name: render
        decisions: [ok]
        posture: abstain
        facts: {x: {type: number}, flag: {type: boolean, required: false}, s: {type: string}}
        derived: {half: {type: number}}
        rules:
          - {name: halve, derive: half, value: {div: [{fact: x}, 2]}, explain: "{x} / 2 = {half}"}
        decision_rules:
          - {name: r, decide: ok, priority: 1, explain: "flag {flag}, {{x}} is {x}, 100% {s}"}
    """)
    rules = RuleKernel(rb).query({"x": 3.0, "s": "sure"})["symbolic_trace"]["rules"]
    assert [r["explanation"] for r in rules] == ["3 / 2 = 1.5", "flag unknown, {x} is 3, 100% sure"]


def test_a_query_the_gate_stops_abstains_without_a_proof():
    report = RuleKernel(GRANT_RB).query({"age": "34", "annual_income": 21000, "resident": True, "pets": 2})
    assert json_round_trip(report) == report and set(report) == REPORT_KEYS
    assert (report["decision"], report["status"], report["proof_checked"], report["proof"]) == (
        None, "abstain", False, None)
    assert report["rejected_facts"] == [
        {"field": "age", "value": "34", "reasons": ["expected an integer, got string"]},
        {"field": "pets", "value": 2, "reasons": ["unknown fact"]},
        {"field": "has_active_grant", "value": None, "reasons": ["required fact missing"]},
    ]
    assert report["proof_summary"] == "No decision: the fact gate rejected 3 fact(s): age, pets, has_active_grant."
    assert report["certified_fact_summary"] == {"accepted": 2, "rejected": 3, "derived": 0}
    assert report["symbolic_trace"] == {"rules_evaluated": 0, "rules_fired": 0, "rules": []}
    assert report["confidence"] == {"overall": 1.0, "symbolic": 0.0, "neural": None}
    assert report["deciding_rules"] == [] and report["checker_problems"] == []


def test_an_indeterminate_query_says_why():
    abstaining = book("""
        name: abstaining
        decisions: [ok]
        posture: abstain
        facts: {n: {type: integer}}
        derived: {level: {type: integer}}
        rules:
          - {name: one, derive: level, value: 1}
          - {name: two, derive: level, when: {fact: n, op: ">", value: 5}, value: 2}
        decision_rules: [{name: r, decide: ok, priority: 1, when: {fact: n, op: ">", value: 0}}]
    """)
    kernel = RuleKernel(abstaining)
    idle = kernel.query({"n": 0})
    assert (idle["status"], idle["decision"], idle["proof_checked"]) == ("indeterminate", None, True)
    assert idle["proof_summary"].startswith("No decision: no decision rule fired without being blocked, and the"
                                            " posture is abstain.")
    conflict = kernel.query({"n": 6})
    assert conflict["status"] == "indeterminate" and conflict["proof_checked"] is True
    assert conflict["proof_summary"].startswith("No decision: rules derived conflicting values for level.")


def test_a_proof_the_checker_rejects_is_indeterminate(monkeypatch):
    monkeypatch.setattr("proofgym.rules._checker.check_proof", lambda rulebook, proof: ["firing 0 is wrong"])
    report = RuleKernel(GRANT_RB).query(GRANT_OK)
    assert (report["decision"], report["status"], report["proof_checked"]) == (None, "indeterminate", False)
    assert report["checker_problems"] == ["firing 0 is wrong"]
    assert report["confidence"]["symbolic"] == 0.0 and report["deciding_rules"] == []
    assert report["proof_summary"].startswith("Proof rejected by the independent checker (1 problem(s): firing 0")
    assert report["proof"]["decision"]["decision"] == "permit"  # kept as evidence


def test_a_checker_that_crashes_has_not_accepted_the_proof(monkeypatch):
    def crash(rulebook, proof):
        raise RuntimeError("boom")

    monkeypatch.setattr("proofgym.rules._checker.check_proof", crash)
    report = RuleKernel(GRANT_RB).query(GRANT_OK)
    assert report["status"] == "indeterminate" and report["proof_checked"] is False
    assert report["checker_problems"] == ["the proof checker failed: RuntimeError: boom"]


def test_without_the_checker_nothing_is_certified():
    report = RuleKernel(GRANT_RB, check=False).query(GRANT_OK)
    assert (report["decision"], report["status"], report["proof_checked"]) == ("permit", "decided", False)
    assert report["confidence"]["symbolic"] == 0.0 and report["checker_problems"] == []
    assert "its proof was not checked" in report["proof_summary"]


def test_deny_by_default_is_said_in_the_summary():
    assert "default" not in RuleKernel(GRANT_RB).query(GRANT_OK)["proof_summary"]
    only_permit = book("""
        name: only_permit
        decisions: [permit, deny]
        default_decision: deny
        facts: {ok: {type: boolean}}
        decision_rules: [{name: yes_rule, decide: permit, priority: 1, when: {fact: ok, op: "==", value: true}}]
    """)
    report = RuleKernel(only_permit).query({"ok": False})
    assert report["decision"] == "deny" and report["proof_checked"] is True
    assert report["proof_summary"].startswith("Decision 'deny' (the deny posture's default: no decision rule"
                                              " decided) independently certified")


@pytest.mark.parametrize("check", [True, False])
def test_reports_share_nothing_mutable(check):
    kernel = RuleKernel(GRANT_RB, check=check)
    first = kernel.query(GRANT_OK)
    first["proof"]["constraints"][0]["blocks"].append("deny")
    first["symbolic_trace"]["rules"][0]["fired"] = "tampered"
    first["deciding_rules"].append("x")
    second = kernel.query(GRANT_OK)
    assert second["proof"]["constraints"][0]["blocks"] == ["permit"]
    assert second["symbolic_trace"]["rules"][0]["fired"] is True
    assert second["deciding_rules"] == ["permit_eligible"]
