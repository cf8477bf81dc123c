"""load_json: strict JSON, one key once, bounded depth and integers; refusals name their line or key path."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from proofgym.formats import MAX_DEPTH, MAX_INT_DIGITS, DocumentError, load_json


def refusal(text):
    with pytest.raises(DocumentError) as info:
        load_json(text)
    return info.value


def test_json_loads():
    assert load_json('{"a": [1, 2.5, true, null, "x"], "b": {}}') == {"a": [1, 2.5, True, None, "x"], "b": {}}


def test_a_key_given_twice_is_refused_with_its_path():
    error = refusal('{"runtime": {"timeout_s": 10, "timeout_s": 0.001}}')
    assert error.path == ("runtime", "timeout_s") and "given twice" in error.reason


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_constants_that_are_not_json_are_refused(constant):
    assert refusal(f'{{"a": [{constant}]}}').path == ("a", 0)


def test_nesting_past_the_limit_is_refused_before_decoding():
    error = refusal('{"a": ' + "[" * 2000 + "]" * 2000 + "}")
    assert f"nested more than {MAX_DEPTH} levels deep at a[0]" in error.reason


def test_an_integer_past_the_limit_is_refused_with_its_key():
    error = refusal('{"id": ' + "9" * 5000 + "}")
    assert "an integer of 5000 digits at id" in error.reason and f"{MAX_INT_DIGITS} digits" in error.reason


def test_syntax_errors_give_line_and_column():
    error = refusal('{"a":\n [1,,]}')
    assert error.reason == "not valid JSON: Expecting value" and (error.line, error.column) == (2, 5)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_json_value_loads_back(value):
    assert load_json(json.dumps(value)) == value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]",:01-eE.nulltrueNaN \n\\'), max_size=80))
def test_any_text_loads_or_is_one_document_error(text):
    try:
        load_json(text)
    except DocumentError as exc:
        assert "\n" not in str(exc)
