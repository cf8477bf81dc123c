import json

import pytest

from proofgym.parsers import JSONBlockParser


def parse_facts(facts, **kwargs):
    parser = JSONBlockParser(decisions=("permit", "deny"), **kwargs)
    raw = facts if isinstance(facts, str) else json.dumps(facts)
    return parser.parse(f'<decision>{{"classification": "permit", "facts": {raw}}}</decision>')


def test_scalars_are_kept_as_given():
    facts = {"s": "x", "i": -3, "f": 2.5, "b": False, "n": None}
    assert parse_facts(facts).claim.facts == facts


def test_wrapped_value_with_confidence():
    result = parse_facts({"age": {"value": 34, "confidence": 1}, "city": {"value": "Oslo"}})
    assert result.claim.facts == {"age": {"value": 34, "confidence": 1.0}, "city": {"value": "Oslo"}}
    assert result.claim.fact_value("age") == 34


def test_facts_are_a_plain_dict():
    assert type(parse_facts({"a": 1}).claim.facts) is dict


@pytest.mark.parametrize("confidence", [-0.1, 1.5, "0.5", True, None, 10**400])
def test_confidence_must_be_a_number_in_unit_interval(confidence):
    assert parse_facts({"a": {"value": 1, "confidence": confidence}}).error.kind == "bad_facts"


@pytest.mark.parametrize(
    "wrapped",
    [{"value": 1, "confidence": 0.5, "source": "me"}, {"confidence": 0.5}, {}, {"value": [1]}, {"value": {"value": 1}}],
)
def test_wrapped_value_shape_is_strict(wrapped):
    assert parse_facts({"a": wrapped}).error.kind == "bad_facts"


@pytest.mark.parametrize("name", ["", "1abc", "has space", "dash-name", "é", "a" * 65])
def test_fact_names_are_identifiers_of_at_most_64_chars(name):
    assert parse_facts({name: 1}).error.kind == "bad_facts"


def test_64_char_fact_name_is_accepted():
    assert parse_facts({"a" * 64: 1}).ok


@pytest.mark.parametrize("value", [[1, 2], ["x"]])
def test_non_scalar_values_are_rejected(value):
    assert parse_facts({"a": value}).error.kind == "bad_facts"


@pytest.mark.parametrize("number", ["1e999", "-1e999"])
def test_non_finite_numbers_are_rejected(number):
    assert parse_facts(f'{{"a": {number}}}').error.kind == "bad_facts"
    assert parse_facts(f'{{"a": {{"value": {number}}}}}').error.kind == "bad_facts"


@pytest.mark.parametrize("facts", ["null", "[]", '"a=1"', "3"])
def test_facts_must_be_an_object(facts):
    assert parse_facts(facts).error.kind == "bad_facts"


def test_lone_surrogate_in_a_fact_is_rejected():
    # It would parse, then break Claim.key() (UTF-8 encoding) downstream.
    assert parse_facts('{"a": "\\ud800"}').error.kind == "bad_facts"


def test_missing_facts_key_means_no_facts_unless_required():
    completion = '<decision>{"classification": "deny"}</decision>'
    assert JSONBlockParser().parse(completion).claim.facts == {}
    assert JSONBlockParser(require_facts=True).parse(completion).error.kind == "bad_facts"
