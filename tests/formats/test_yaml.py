"""load_yaml: one key once, no aliases, bounded depth and integers; every refusal names its line and key."""

import time

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from proofgym.formats import MAX_DEPTH, MAX_INT_DIGITS, DocumentError, load_yaml

BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi")]
)


def refusal(text):
    with pytest.raises(DocumentError) as info:
        load_yaml(text)
    return info.value


def test_plain_yaml_loads_as_the_safe_loader_reads_it():
    text = "name: t\nruntime: {timeout_s: 10, retries: 2}\nlist: [1, 2.5, true, null, 'x']\nm: {<<: {a: 1}, b: 2}\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml("") is None


@pytest.mark.parametrize("text", [
    "runtime: {timeout_s: 10, timeout_s: 0.001}\n",
    "runtime:\n  timeout_s: 10\n  timeout_s: 0.001\n",
])
def test_a_key_given_twice_is_refused_with_its_line_and_path(text):
    error = refusal(text)
    assert error.path == ("runtime", "timeout_s") and "given twice" in error.reason
    assert error.line == text.count("\n", 0, text.rindex("timeout_s")) + 1


def test_a_merged_key_given_again_is_a_key_given_twice():
    assert refusal("a: {<<: {b: 1}, b: 2}\n").path == ("a", "b")


def test_the_billion_laughs_is_refused_at_its_first_alias():
    started = time.process_time()
    error = refusal(BILLION_LAUGHS)
    assert "aliases (*name) are not allowed" in error.reason
    assert (error.line, error.path) == (2, ("b", 0))
    assert time.process_time() - started < 5  # expanding it would take minutes and gigabytes


def test_any_alias_is_refused():
    assert refusal("a: &x 1\nb: *x\n").path == ("b",)


@pytest.mark.parametrize("text", [
    "a: " + "[" * 10_000 + "]" * 10_000,
    "a:\n" + "".join(" " * i + "-\n" for i in range(1, 5_000)),
    "a: " + "{b: " * 10_000 + "1" + "}" * 10_000,
])
def test_nesting_past_the_limit_is_refused_while_composing(text):
    error = refusal(text)
    assert f"nested more than {MAX_DEPTH} levels deep" in error.reason
    assert error.path[0] == "a" and error.line is not None


def test_nesting_at_the_limit_loads():
    assert load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


@pytest.mark.parametrize("number", ["9" * 5000, "-" + "9" * (MAX_INT_DIGITS + 1), "0x" + "f" * MAX_INT_DIGITS])
def test_an_integer_past_the_limit_is_refused_with_its_key(number):
    error = refusal(f"runtime:\n  retries: {number}\n")
    assert error.path == ("runtime", "retries") and error.line == 2
    assert f"the limit is {MAX_INT_DIGITS} digits" in error.reason


def test_a_value_the_safe_loader_cannot_build_is_one_line_with_its_key():
    error = refusal("when: 2024-13-01\n")
    assert error.path == ("when",) and "month must be in 1..12" in error.reason
    assert "could not determine a constructor" in refusal("a: !!python/object:os.system x\n").reason


@pytest.mark.parametrize("text, where", [
    ("a: [1, 2\n", (2, 1)),
    ("a: 1\n---\nb: 2\n", (2, 1)),
    ("a: 1\nb: \x07\n", (2, 4)),
])
def test_syntax_errors_give_line_and_column(text, where):
    error = refusal(text)
    assert error.reason.startswith("not valid YAML: ") and (error.line, error.column) == where
    assert "\n" not in str(error)


def test_a_list_as_a_key_is_refused():
    assert "a mapping key must be a single value" in refusal("a:\n  ? [1, 2]\n  : x\n").reason


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(yaml_values)
def test_anything_yaml_dumps_loads_back_or_is_refused_for_depth(value):
    text = yaml.safe_dump(value)
    try:
        assert load_yaml(text) == yaml.safe_load(text)
    except DocumentError as exc:
        assert "nested more than" in exc.reason


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab:- \n[]{},&*!?'\"#|>%@`\t0x9"), max_size=80))
def test_any_text_loads_or_is_one_document_error(text):
    try:
        load_yaml(text)
    except DocumentError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize("text, path, reason", [
    ("runtime:\n  retries: [1, 2\n", ("runtime", "retries"),
     "while parsing a flow sequence (from line 2, column 12): expected ',' or ']'"),
    ('runtime:\n  name: "open\n', ("runtime", "name"), "while scanning a quoted scalar (from line 2, column 9)"),
    ("rules:\n  - when: 1\n    then: : 2\n", ("rules", 0, "then"), "mapping values are not allowed here"),
])
def test_a_syntax_error_names_the_key_being_read(text, path, reason):
    error = refusal(text)
    assert error.path == path and error.reason.startswith(f"not valid YAML: {reason}")
