"""Arithmetic: integer results stay integers, division gives a number, division by zero and overflow are unknown,
and nothing raises."""

from proofgym.rules import compile_rulebook

from kernel_helpers import book, prove

ARITH = """
    name: arith
    decisions: [ok]
    posture: abstain
    facts: {a: {type: number}, b: {type: number}, i: {type: integer}, j: {type: integer}}
    derived:
      total: {type: integer}
      scaled: {type: number}
      ratio: {type: number}
    rules:
      - {name: add_up, derive: total, value: {sub: [{add: [{fact: i}, {fact: j}]}, 1]}}
      - {name: scale, derive: scaled, value: {mul: [{fact: a}, {fact: b}]}}
      - {name: divide, derive: ratio, value: {div: [{fact: i}, {fact: j}]}}
    decision_rules: [{name: r, decide: ok, priority: 1}]
"""


def derived(**facts):
    proof = compile_rulebook(book(ARITH)).evaluate(facts)
    return {name: proof["facts"].get(name) for name in ("total", "scaled", "ratio")}


def test_integer_arithmetic_stays_integer_and_division_gives_a_number():
    facts = prove(book(ARITH), {"a": 1.5, "b": 2, "i": 7, "j": 2})["facts"]
    assert facts["total"] == 8 and type(facts["total"]) is int
    assert facts["scaled"] == 3.0 and facts["ratio"] == 3.5
    assert type(prove(book(ARITH), {"a": 1.5, "b": 2, "i": 8, "j": 2})["facts"]["ratio"]) is float


def test_division_by_zero_is_unknown():
    assert derived(a=1.0, b=1.0, i=1, j=0)["ratio"] is None


def test_overflow_is_unknown():
    assert derived(a=1e308, b=10.0, i=1, j=1)["scaled"] is None  # a float product that would be inf
    assert derived(a=-1e308, b=1e10, i=1, j=1)["scaled"] is None
    assert derived(a=1.0, b=1.0, i=10**308, j=10**308)["total"] is None  # beyond the float range
    assert derived(a=1.0, b=1.0, i=10**308, j=1)["ratio"] == 1e308
    assert derived(a=1e308, b=1e-300, i=1, j=1)["scaled"] == 1e8


def test_an_int_quotient_too_large_for_a_float_is_unknown():
    rb = book(ARITH)
    proof = compile_rulebook(rb).evaluate({"a": 1.0, "b": 1.0, "i": 10**400, "j": 3})  # ungated: no raise
    assert "ratio" not in proof["facts"]
