"""The fact gate (docs/rulebooks.md, "The fact gate"): what is accepted, what is rejected and why."""

import json
import math

import pytest

from proofgym.core import RejectedFact
from proofgym.rules import gate, load_rulebook

from kernel_helpers import GRANT, GRANT_OK, LOAN, LOAN_OK, book

GRANT_RB = load_rulebook(GRANT)
LOAN_RB = load_rulebook(LOAN)


def reasons(facts, rulebook=GRANT_RB):
    """{field: reasons} of the rejected facts."""
    return {r.field: list(r.reasons) for r in gate(rulebook, facts)[1]}


def test_valid_facts_are_all_accepted_with_full_confidence():
    accepted, rejected, confidences = gate(GRANT_RB, GRANT_OK)
    assert accepted == GRANT_OK and rejected == []
    assert confidences == dict.fromkeys(GRANT_OK, 1.0)


def test_an_integral_float_is_accepted_as_an_integer():
    accepted, rejected, _ = gate(GRANT_RB, {**GRANT_OK, "age": 34.0, "annual_income": 21000.5})
    assert rejected == [] and accepted["age"] == 34 and type(accepted["age"]) is int
    assert accepted["annual_income"] == 21000.5


@pytest.mark.parametrize("name, value, reason", [
    ("age", True, "expected an integer, got boolean"),
    ("age", "34", "expected an integer, got string"),
    ("age", 34.5, "expected an integer, got 34.5"),
    ("age", None, "expected an integer, got null"),
    ("age", [34], "expected an integer, got array"),
    ("annual_income", "21000", "expected a number, got string"),
    ("annual_income", False, "expected a number, got boolean"),
    ("resident", 1, "expected a boolean, got integer"),
    ("resident", "true", "expected a boolean, got string"),
])
def test_wrong_types_are_rejected(name, value, reason):
    assert reasons({**GRANT_OK, name: value}) == {name: [reason]}


@pytest.mark.parametrize("value, reason", [
    (-1, "-1 is below the minimum 0"),
    (131, "131 is above the maximum 130"),
    (float("nan"), "expected a finite number within the float range, got nan"),
    (float("inf"), "expected a finite number within the float range, got inf"),
    (10**400, "expected a finite number within the float range, got integer"),
])
def test_out_of_range_and_non_finite_numbers_are_rejected(value, reason):
    assert reasons({**GRANT_OK, "age": value}) == {"age": [reason]}


def test_enums_and_strings():
    rb = book("""
        name: strings
        decisions: [ok]
        posture: abstain
        facts:
          band: {type: enum, values: [low, high]}
          nickname: {type: string, max_length: 5, required: false}
        decision_rules: [{name: r, decide: ok, priority: 1}]
    """)
    assert gate(rb, {"band": "low", "nickname": "Al"})[0] == {"band": "low", "nickname": "Al"}
    assert reasons({"band": "medium", "nickname": "Alexander"}, rb) == {
        "band": ['expected one of low, high, got "medium"'],
        "nickname": ["longer than 5 characters (9)"],
    }
    assert reasons({"band": 1, "nickname": 5}, rb) == {
        "band": ["expected one of low, high, got 1"], "nickname": ["expected a string, got integer"]}


def test_value_confidence_objects():
    accepted, rejected, confidences = gate(GRANT_RB, {**GRANT_OK, "age": {"value": 34, "confidence": 0.9},
                                                      "resident": {"value": True}})
    assert rejected == [] and accepted["age"] == 34 and accepted["resident"] is True
    assert confidences["age"] == 0.9 and confidences["resident"] == 1.0


def test_confidence_below_the_global_or_the_facts_own_minimum_is_rejected():
    assert reasons({**GRANT_OK, "age": {"value": 34, "confidence": 0.5}}) == {
        "age": ["confidence 0.5 is below the minimum 0.8"]}
    rb = book("""
        name: picky
        decisions: [ok]
        posture: abstain
        min_confidence: 0.5
        facts: {a: {type: integer, min_confidence: 0.95}, b: {type: integer}}
        decision_rules: [{name: r, decide: ok, priority: 1}]
    """)
    assert reasons({"a": {"value": 1, "confidence": 0.9}, "b": {"value": 1, "confidence": 0.6}}, rb) == {
        "a": ["confidence 0.9 is below the minimum 0.95"]}


@pytest.mark.parametrize("raw, reason", [
    ({"value": 34, "confidence": 1.5}, "confidence must be a number between 0 and 1, got 1.5"),
    ({"value": 34, "confidence": True}, "confidence must be a number between 0 and 1, got true"),
    ({"value": 34, "confidence": float("nan")}, "confidence must be a number between 0 and 1, got nan"),
    ({"value": 34, "confidence": "high"}, 'confidence must be a number between 0 and 1, got "high"'),
    ({"value": 34, "source": "form"}, "expected a literal or {value, confidence}"),
    ({"confidence": 1.0}, "expected a literal or {value, confidence}"),
])
def test_malformed_value_confidence_objects_are_rejected(raw, reason):
    assert reasons({**GRANT_OK, "age": raw}) == {"age": [reason]}


def test_a_wrong_type_and_a_low_confidence_are_both_reported():
    assert reasons({**GRANT_OK, "age": {"value": "x", "confidence": 0.1}}) == {
        "age": ["expected an integer, got string", "confidence 0.1 is below the minimum 0.8"]}


def test_unknown_and_derived_facts_are_rejected():
    assert reasons({**GRANT_OK, "income": 5, "is_adult": True}) == {
        "income": ["unknown fact"], "is_adult": ["a derived fact cannot be asserted"]}


def test_missing_required_facts_are_rejected_and_optional_ones_are_not():
    assert reasons({"age": 34}) == {name: ["required fact missing"]
                                    for name in ("annual_income", "resident", "has_active_grant")}
    accepted, rejected, _ = gate(LOAN_RB, LOAN_OK)  # co_signer is optional
    assert rejected == [] and "co_signer" not in accepted


def test_rejected_values_are_json_safe_copies():
    facts = {"age": float("nan"), "extra": {"deep": [1, float("inf"), object()]}, 5: "x", "huge": 10**5000}
    _, rejected, _ = gate(GRANT_RB, facts)
    text = json.dumps([r.to_dict() for r in rejected], allow_nan=False)
    by_field = {r.field: r.value for r in rejected}
    assert by_field["age"] == "nan" and by_field["extra"] == {"deep": [1, "inf", "<object>"]}
    assert by_field["5"] == "x" and by_field["huge"] == "<integer of 16610 bits>"
    assert "nan" in text
    assert all(isinstance(r, RejectedFact) for r in rejected)


def test_something_that_is_not_a_mapping_is_rejected_whole():
    accepted, rejected, confidences = gate(GRANT_RB, ["age", 34])
    assert accepted == {} and confidences == {}
    assert [(r.field, r.value, r.reasons) for r in rejected] == [
        ("facts", ["age", 34], ("expected an object of facts",))]


def test_accepted_numbers_keep_their_exact_value():
    accepted, _, _ = gate(GRANT_RB, {**GRANT_OK, "annual_income": 1e-300})
    assert accepted["annual_income"] == 1e-300 and not math.isnan(accepted["annual_income"])
