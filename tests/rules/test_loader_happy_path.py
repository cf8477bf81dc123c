from proofgym.rules import load_rulebook
from proofgym.rules._ast import ALWAYS, All, Arith, Compare, Const, FactRef, Member

from kernel_helpers import GRANT, LOAN, book


def test_grant_loads_into_the_canonical_ast():
    rb = load_rulebook(GRANT)
    assert rb.name == "grant_eligibility" and rb.version == "1" and rb.source == str(GRANT)
    assert rb.decisions == ("permit", "deny") and rb.posture == "deny" and rb.default_decision == "deny"
    assert rb.min_confidence == 0.8
    assert [f.name for f in rb.facts] == ["age", "annual_income", "resident", "has_active_grant"]
    age = rb.fact("age")
    assert (age.type, age.minimum, age.maximum, age.required) == ("integer", 0, 130, True)
    # all_criteria_met comes first in the file but reads what the other two derive: it is evaluated after them.
    assert [(r.name, r.stratum) for r in rb.derive_rules] == [
        ("adult", 1), ("income_within_threshold", 1), ("all_criteria_met", 2)]
    assert rb.derived_fact("eligible").stratum == 2 and rb.derived_fact("is_adult").stratum == 1
    assert rb.derived_fact("is_adult").has_default and rb.derived_fact("is_adult").default is False
    assert [r.priority for r in rb.decision_rules] == [10, 5, 4, 3, 2]
    assert rb.constraints[0].blocks == ("permit",)
    assert len(rb.content_hash) == 64


def test_loan_loads_arithmetic_enums_and_membership():
    rb = load_rulebook(LOAN)
    dti = next(r for r in rb.derive_rules if r.name == "debt_to_income")
    assert dti.value == Arith("div", FactRef("annual_debt"), FactRef("annual_income"))
    low = next(r for r in rb.derive_rules if r.name == "low_risk")
    assert low.value == Const("low")
    assert low.when == All((Compare("<", FactRef("dti"), Const(0.3)),
                            Member(FactRef("credit_band"), ("excellent", "good"))))
    assert rb.derived_fact("risk").values == ("low", "medium", "high")
    assert rb.derived_fact("dti").has_default is False
    assert rb.decision_rules[-1].when == Member(FactRef("risk"), ("high",), negated=True)
    assert rb.fact("co_signer").required is False


def test_omitted_keys_take_their_documented_defaults():
    rb = book("""
        name: defaults
        decisions: [approve]
        default_decision: approve
        facts: {x: {type: boolean}}
        derived: {d: {type: boolean}}
        rules: [{name: r, derive: d}]
        constraints: [{name: c, require: {fact: x, op: "==", value: true}}]
        decision_rules: [{name: always_approve, decide: approve, priority: 1}]
    """)
    assert rb.posture == "deny" and rb.min_confidence == 0.0 and rb.version == ""
    rule = rb.derive_rules[0]
    assert rule.when == ALWAYS and rule.value == Const(True) and rule.explain == ""
    assert rb.constraints[0].blocks == ("approve",)  # every decision
    assert rb.decision_rules[0].when == ALWAYS


def test_bare_literals_and_general_comparisons():
    rb = book("""
        name: general
        decisions: [ok]
        posture: abstain
        facts: {a: {type: integer}, b: {type: number}}
        decision_rules:
          - name: ok_rule
            decide: ok
            priority: 1
            when: {left: {add: [{fact: a}, 2]}, op: "<", right: {mul: [{fact: b}, {value: 1.5}]}}
          - name: member_rule
            decide: ok
            priority: 2
            when: {left: {sub: [{fact: a}, 1]}, op: not_in, right: [1, 2]}
    """)
    first, second = rb.decision_rules
    assert second.when == Compare("<", Arith("add", FactRef("a"), Const(2)),
                                  Arith("mul", FactRef("b"), Const(1.5)))
    assert first.when == Member(Arith("sub", FactRef("a"), Const(1)), (1, 2), negated=True)


def test_templates_may_escape_braces():
    rb = book("""
        name: braces
        decisions: [ok]
        posture: abstain
        facts: {a: {type: integer}}
        decision_rules: [{name: r, decide: ok, priority: 1, explain: "{{literal}} and {a}"}]
    """)
    assert rb.decision_rules[0].explain == "{{literal}} and {a}"
