"""Conditions are three-valued: True, False or unknown (docs/rulebooks.md, "Conditions and operands")."""

import pytest

from proofgym.rules import parse_rulebook

from kernel_helpers import prove

T, F, U = True, False, None

FACTS = {
    "p": {"type": "boolean", "required": False},
    "q": {"type": "boolean", "required": False},
    "n": {"type": "integer", "required": False},
    "x": {"type": "number", "required": False},
    "band": {"type": "enum", "values": ["low", "high"], "required": False},
}


def truth(condition, **facts):
    """True, False or None: whether `condition` holds, fails, or is unknown on these facts (a rule deciding `t`
    when it holds and one deciding `f` when its negation holds; neither fires when it is unknown)."""
    rb = parse_rulebook({
        "name": "logic",
        "decisions": ["t", "f"],
        "posture": "abstain",
        "facts": FACTS,
        "decision_rules": [
            {"name": "holds", "decide": "t", "priority": 2, "when": condition},
            {"name": "fails", "decide": "f", "priority": 1, "when": {"not": condition}},
        ],
    })
    candidates = prove(rb, facts)["candidates"]
    assert candidates != ["holds", "fails"]
    return {"holds": T, "fails": F}.get(candidates[0]) if candidates else U


def p_is(value):
    return {"fact": "p", "op": "==", "value": value}


P = p_is(True)
Q = {"fact": "q", "op": "==", "value": True}


def facts_for(a, b):
    """p and q as asked: True, False or absent (so that `p == true` is unknown)."""
    return {**({} if a is U else {"p": a}), **({} if b is U else {"q": b})}


ALL_TABLE = [(a, b, F if F in (a, b) else (U if U in (a, b) else T)) for a in (T, F, U) for b in (T, F, U)]
ANY_TABLE = [(a, b, T if T in (a, b) else (U if U in (a, b) else F)) for a in (T, F, U) for b in (T, F, U)]


@pytest.mark.parametrize("a, b, expected", ALL_TABLE)
def test_all_is_false_if_any_is_false_else_unknown_if_any_is_unknown(a, b, expected):
    assert truth({"all": [P, Q]}, **facts_for(a, b)) is expected


@pytest.mark.parametrize("a, b, expected", ANY_TABLE)
def test_any_is_true_if_any_is_true_else_unknown_if_any_is_unknown(a, b, expected):
    assert truth({"any": [P, Q]}, **facts_for(a, b)) is expected


@pytest.mark.parametrize("a, expected", [(T, F), (F, T), (U, U)])
def test_not_keeps_unknown_unknown(a, expected):
    assert truth({"not": P}, **facts_for(a, U)) is expected


def test_a_comparison_on_an_absent_fact_is_unknown_for_every_operator():
    for op in ("==", "!=", "<", "<=", ">", ">="):
        assert truth({"fact": "n", "op": op, "value": 3}) is U
    assert truth({"fact": "band", "op": "in", "value": ["low"]}) is U
    assert truth({"fact": "band", "op": "not_in", "value": ["low"]}) is U


@pytest.mark.parametrize("op, expected", [("==", F), ("!=", T), ("<", T), ("<=", T), (">", F), (">=", F)])
def test_comparison_operators(op, expected):
    assert truth({"fact": "n", "op": op, "value": 3}, n=2) is expected


def test_integers_equal_the_same_number_as_a_float():
    assert truth({"fact": "x", "op": "==", "value": 1}, x=1.0) is T
    assert truth({"left": {"fact": "n"}, "op": "==", "right": {"fact": "x"}}, n=2, x=2.0) is T


def test_membership():
    assert truth({"fact": "band", "op": "in", "value": ["low"]}, band="low") is T
    assert truth({"fact": "band", "op": "in", "value": ["low"]}, band="high") is F
    assert truth({"fact": "band", "op": "not_in", "value": ["low"]}, band="high") is T
    assert truth({"fact": "n", "op": "in", "value": [1, 2.0]}, n=2) is T


def test_general_comparisons_with_arithmetic():
    twice_n = {"mul": [{"fact": "n"}, 2]}
    assert truth({"left": twice_n, "op": ">", "right": {"fact": "x"}}, n=3, x=5.5) is T
    assert truth({"left": twice_n, "op": ">", "right": {"fact": "x"}}, n=3) is U
    assert truth({"left": {"sub": [{"fact": "x"}, {"fact": "n"}]}, "op": "==", "right": 0.5}, n=3, x=3.5) is T


def test_division_by_zero_is_unknown():
    ratio = {"div": [{"fact": "x"}, {"fact": "n"}]}
    assert truth({"left": ratio, "op": ">", "right": 1}, x=3.0, n=2) is T
    assert truth({"left": ratio, "op": ">", "right": 1}, x=3.0, n=0) is U
    assert truth({"left": ratio, "op": "<=", "right": 1}, x=3.0, n=0) is U


def test_unknown_inside_a_decided_combination_does_not_matter():
    absent_n = {"fact": "n", "op": ">", "value": 0}
    assert truth({"all": [p_is(True), absent_n]}, p=False) is F
    assert truth({"any": [p_is(True), absent_n]}, p=True) is T
    assert truth({"any": [{"not": absent_n}, p_is(False)]}, p=True) is U
