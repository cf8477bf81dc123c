"""The checker accepts proofs worked by hand from docs/rulebooks.md, and derives decisions by its semantics."""

import json

import pytest

from proofgym.rules._ast import DecisionRule, DerivedSpec, FactSpec
from proofgym.rules._checker import check_proof, derive_decision

from ._support import (
    ALWAYS, All, AnyOf, Arith, Compare, Const, FactRef, GRANT_PROOFS, Member, Not, build_rulebook, cmp, derive,
    grant_proof,
)


@pytest.mark.parametrize("case", GRANT_PROOFS)
def test_hand_worked_proofs_are_accepted(case):
    rulebook, proof = grant_proof(case)
    assert check_proof(rulebook, proof) == []


@pytest.mark.parametrize("case", GRANT_PROOFS)
def test_derive_decision_gives_the_hand_worked_decision(case):
    rulebook, proof = grant_proof(case)
    assert derive_decision(rulebook, proof["inputs"]) == proof["decision"]


@pytest.mark.parametrize("case", GRANT_PROOFS)
def test_a_json_round_trip_is_still_accepted(case):
    rulebook, proof = grant_proof(case)
    assert check_proof(rulebook, json.loads(json.dumps(proof))) == []


def test_key_order_in_mappings_does_not_matter():
    rulebook, proof = grant_proof("agreeing_rules")
    reordered = {key: proof[key] for key in reversed(list(proof))}
    reordered["facts"] = dict(reversed(list(proof["facts"].items())))
    reordered["firings"] = [{key: f[key] for key in reversed(list(f))} for f in proof["firings"]]
    assert check_proof(rulebook, reordered) == []


def test_an_equal_copy_of_the_rulebook_checks_the_same():
    rulebook, proof = grant_proof("permit")
    copy, _ = grant_proof("permit")
    assert copy is not rulebook and copy == rulebook
    assert check_proof(copy, proof) == [] and check_proof(rulebook, proof) == []


# ---- the three-valued semantics, through a one-rule abstain rulebook: decided iff the condition is true ----

_FACTS = (FactSpec("n", "number", required=False), FactSpec("k", "integer", required=False),
          FactSpec("b", "boolean", required=False), FactSpec("s", "string", required=False),
          FactSpec("e", "enum", required=False, values=("x", "y")))
_UNKNOWN = cmp("n", ">", 0)  # unknown whenever n is not given


def _holds(condition, **inputs) -> bool:
    rulebook = build_rulebook("probe", facts=_FACTS, decisions=["yes"], posture="abstain",
                              decision_rules=[DecisionRule("probe", "yes", 1, condition, "")])
    return derive_decision(rulebook, inputs)["status"] == "decided"


@pytest.mark.parametrize("condition, inputs, expected", [
    (All((_UNKNOWN, cmp("b", "==", False))), {"b": True}, False),  # all: any false item makes it false
    (Not(All((_UNKNOWN, cmp("b", "==", False)))), {"b": True}, True),
    (Not(All((_UNKNOWN, cmp("b", "==", True)))), {"b": True}, False),  # ... else unknown: not unknown is unknown
    (AnyOf((_UNKNOWN, cmp("b", "==", True))), {"b": True}, True),  # any: any true item makes it true
    (Not(AnyOf((_UNKNOWN, cmp("b", "==", False)))), {"b": True}, False),  # ... else unknown
    (Not(AnyOf((cmp("b", "==", False),))), {"b": True}, True),
    (ALWAYS, {}, True),
    (AnyOf(()), {}, False),
    (Not(_UNKNOWN), {}, False),
    (cmp("n", "!=", 3), {}, False),  # != on an absent fact is unknown, not true
    (Member(FactRef("e"), ("x",), negated=True), {}, False),
    (Member(FactRef("e"), ("x",), negated=True), {"e": "y"}, True),
    (Member(FactRef("k"), (1, 2)), {"k": 2}, True),
])
def test_conditions_are_three_valued(condition, inputs, expected):
    assert _holds(condition, **inputs) is expected


@pytest.mark.parametrize("condition, inputs, expected", [
    (cmp("n", "==", 1), {"n": 1.0}, True),  # 1 == 1.0
    (Compare("==", FactRef("k"), FactRef("n")), {"k": 2, "n": 2.0}, True),
    (Compare("==", FactRef("b"), Const(1)), {"b": True}, False),  # a number never equals a boolean ...
    (Compare("!=", FactRef("b"), Const(1)), {"b": True}, True),
    (Compare("==", FactRef("s"), Const(1)), {"s": "1"}, False),  # ... or a string
    (Member(FactRef("k"), (True,)), {"k": 1}, False),
    (Compare("<", FactRef("b"), Const(2)), {"b": True}, False),  # booleans are not numbers: ordering is unknown
    (Not(Compare("<", FactRef("b"), Const(2))), {"b": True}, False),
])
def test_equality_compares_values_of_the_same_type(condition, inputs, expected):
    assert _holds(condition, **inputs) is expected


@pytest.mark.parametrize("expression, inputs, expected", [
    (Arith("div", FactRef("n"), Const(0)), {"n": 1}, None),  # division by zero is unknown
    (Arith("div", FactRef("n"), Const(4)), {"n": 1}, 0.25),
    (Arith("mul", Arith("sub", FactRef("n"), Const(1)), FactRef("k")), {"n": 3, "k": 2}, 4),
    (Arith("add", FactRef("n"), FactRef("k")), {"n": 3}, None),  # an absent operand is unknown
    (Arith("add", FactRef("b"), Const(1)), {"b": True}, None),  # arithmetic is on numbers only
    (Arith("mul", FactRef("n"), Const(1e308)), {"n": 10}, None),  # beyond the float range: an overflow
    (Arith("mul", FactRef("k"), Const(10 ** 300)), {"k": 10 ** 9}, None),  # integers overflow too
    (Arith("div", Const(10 ** 300), FactRef("n")), {"n": 1e-300}, None),  # a quotient beyond the float range
    (Arith("sub", Const(-1e308), FactRef("n")), {"n": 1e308}, None),
])
def test_arithmetic(expression, inputs, expected):
    rulebook = build_rulebook(
        "arith", facts=_FACTS, derived=[DerivedSpec("out", "number")],
        rules=[derive("compute", "out", ALWAYS, expression)], decisions=["yes"], posture="abstain",
        decision_rules=[DecisionRule("known", "yes", 1, Compare("==", FactRef("out"), FactRef("out")), "")])
    # out == out holds exactly when out is known, i.e. when the rule fired with a known value
    assert derive_decision(rulebook, inputs)["status"] == ("indeterminate" if expected is None else "decided")
    if expected is not None:
        assert _holds(Compare("==", expression, Const(expected)), **inputs)


def test_a_rule_whose_value_is_unknown_derives_nothing():
    rulebook = build_rulebook(
        "unknown_value", facts=_FACTS, derived=[DerivedSpec("out", "number", default=7, has_default=True)],
        rules=[derive("compute", "out", ALWAYS, Arith("div", Const(1), FactRef("n")))],
        decisions=["yes"], posture="abstain",
        decision_rules=[DecisionRule("seven", "yes", 1, cmp("out", "==", 7), "")])
    assert derive_decision(rulebook, {"n": 0})["status"] == "decided"  # no derivation: the default applies
    assert derive_decision(rulebook, {"n": 2})["status"] == "indeterminate"  # out = 0.5


def test_a_higher_stratum_reads_the_final_value_of_a_lower_one():
    # 'later' is listed first in the file but reads 'first', so it belongs to the later stratum
    rulebook = build_rulebook(
        "strata", facts=_FACTS,
        derived=[DerivedSpec("first", "integer"), DerivedSpec("later", "boolean", default=False, has_default=True)],
        rules=[derive("later_rule", "later", cmp("first", "==", 2)), derive("first_rule", "first", ALWAYS, Const(2))],
        decisions=["yes"], posture="abstain",
        decision_rules=[DecisionRule("p", "yes", 1, cmp("later", "==", True), "")])
    assert [rule.name for rule in rulebook.derive_rules] == ["first_rule", "later_rule"]
    assert derive_decision(rulebook, {})["status"] == "decided"
