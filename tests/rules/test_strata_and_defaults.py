"""Strata, defaults, conflicts and the proof's firings (docs/rulebooks.md, "Strata" and "The proof")."""

from proofgym.rules import compile_rulebook, load_rulebook

from kernel_helpers import GRANT, GRANT_OK, LOAN, LOAN_OK, book, prove

CHAIN = """
    name: chain
    decisions: [go, stop]
    default_decision: stop
    facts: {n: {type: integer}, flag: {type: boolean, required: false}}
    derived:
      top: {type: boolean, default: false}
      middle: {type: integer}
      bottom: {type: integer, default: 0}
      orphan: {type: enum, values: [a, b], default: b}
    rules:   # listed top-down: evaluated bottom-up
      - {name: make_top, derive: top, when: {fact: middle, op: ">", value: 10}}
      - {name: make_middle, derive: middle, when: {fact: bottom, op: ">", value: 0},
         value: {mul: [{fact: bottom}, 3]}}
      - {name: make_bottom, derive: bottom, when: {fact: n, op: ">", value: 0}, value: {fact: n}}
    decision_rules:
      - {name: go_rule, decide: go, priority: 1, when: {fact: top, op: "==", value: true}}
"""


def test_rules_run_stratum_by_stratum_whatever_their_file_order():
    rb = book(CHAIN)
    assert [(r.name, r.stratum) for r in rb.derive_rules] == [("make_bottom", 1), ("make_middle", 2), ("make_top", 3)]
    assert {d.name: d.stratum for d in rb.derived} == {"top": 3, "middle": 2, "bottom": 1, "orphan": 1}
    proof = prove(rb, {"n": 4})
    assert [(f["rule"], f["stratum"], f["premises"], f["conclusion"]) for f in proof["firings"]] == [
        ("make_bottom", 1, {"n": 4}, {"fact": "bottom", "value": 4}),
        ("make_middle", 2, {"bottom": 4}, {"fact": "middle", "value": 12}),
        ("make_top", 3, {"middle": 12}, {"fact": "top", "value": True}),
    ]
    assert proof["defaults"] == {"orphan": "b"}  # no rule derives it: stratum 1, its default
    assert proof["facts"] == {"n": 4, "bottom": 4, "middle": 12, "top": True, "orphan": "b"}
    assert proof["decision"]["decision"] == "go"


def test_a_default_is_used_only_when_no_rule_derives_the_fact():
    proof = prove(book(CHAIN), {"n": 0})
    assert proof["firings"] == []
    # bottom takes its default 0; middle has none and stays unknown; so top's rule cannot fire: default false.
    assert proof["defaults"] == {"bottom": 0, "top": False, "orphan": "b"}
    assert "middle" not in proof["facts"]
    assert proof["decision"] == {"status": "decided", "decision": "stop", "deciding_rules": [], "by_default": True}


def test_a_rule_whose_value_is_unknown_does_not_fire_and_the_default_applies():
    rb = book("""
        name: unknown_value
        decisions: [ok]
        posture: abstain
        facts: {a: {type: number}, b: {type: number}}
        derived: {ratio: {type: number, default: -1}}
        rules: [{name: divide, derive: ratio, value: {div: [{fact: a}, {fact: b}]}}]
        decision_rules: [{name: r, decide: ok, priority: 1}]
    """)
    assert prove(rb, {"a": 1, "b": 4})["facts"]["ratio"] == 0.25
    proof = prove(rb, {"a": 1, "b": 0})
    assert proof["firings"] == [] and proof["defaults"] == {"ratio": -1}


def test_premises_hold_the_referenced_facts_known_when_the_rule_runs():
    rb = load_rulebook(LOAN)
    proof = prove(rb, LOAN_OK)  # co_signer absent: not a premise of anything, not a fact
    low = next(f for f in proof["firings"] if f["rule"] == "low_risk")
    assert low["premises"] == {"dti": 0.1, "credit_band": "good"}
    assert "co_signer" not in proof["facts"]
    afford = next(f for f in proof["firings"] if f["rule"] == "affordability")
    assert afford["premises"] == {"loan_amount": 20000, "annual_income": 60000, "annual_debt": 6000}


def test_the_grant_proof():
    proof = prove(load_rulebook(GRANT), GRANT_OK)
    assert [f["rule"] for f in proof["firings"]] == ["adult", "income_within_threshold", "all_criteria_met"]
    assert proof["inputs"] == GRANT_OK and proof["defaults"] == {}
    assert proof["constraints"] == [{"rule": "no_second_grant", "held": True, "blocks": ["permit"]}]
    assert proof["candidates"] == ["permit_eligible"]


CONFLICT = """
    name: conflict
    decisions: [ok, refuse]
    default_decision: refuse
    facts: {n: {type: integer}}
    derived:
      level: {type: number, default: 0}
      later: {type: boolean, default: false}
    rules:
      - {name: one, derive: level, when: {fact: n, op: ">", value: 0}, value: 1}
      - {name: same, derive: level, when: {fact: n, op: ">", value: 1}, value: 1.0}
      - {name: other, derive: level, when: {fact: n, op: ">", value: 2}, value: 2}
      - {name: reads_level, derive: later, when: {fact: level, op: ">=", value: 0}}
    decision_rules: [{name: ok_rule, decide: ok, priority: 1}]
"""


def test_rules_agreeing_on_a_value_do_not_conflict():
    proof = prove(book(CONFLICT), {"n": 2})
    assert [f["rule"] for f in proof["firings"]] == ["one", "same", "reads_level"]
    assert proof["facts"]["level"] == 1
    assert proof["decision"]["decision"] == "ok"


def test_a_conflict_leaves_the_fact_unknown_and_the_query_indeterminate_whatever_the_posture():
    proof = prove(book(CONFLICT), {"n": 3})
    assert [f["rule"] for f in proof["firings"]] == ["one", "same", "other"]  # all recorded
    assert "level" not in proof["facts"] and "level" not in proof["defaults"]
    assert proof["defaults"] == {"later": False}  # reads_level read an unknown level: evaluation went on
    assert proof["candidates"] == ["ok_rule"]
    assert proof["decision"] == {"status": "indeterminate", "decision": None, "deciding_rules": [],
                                 "by_default": False}


def test_evaluate_returns_the_same_proof_as_a_fresh_run():
    engine = compile_rulebook(load_rulebook(GRANT))
    first = engine.evaluate(GRANT_OK)
    first["facts"]["age"] = -1  # a caller mutating a proof does not touch the next one
    assert engine.evaluate(GRANT_OK)["facts"]["age"] == 34
