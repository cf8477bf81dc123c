"""load_toml: tomllib with depth and integers bounded before it runs; refusals name their line or key."""

import tomllib

import pytest
from hypothesis import given, settings, strategies as st

from proofgym.formats import MAX_DEPTH, MAX_INT_DIGITS, DocumentError, load_toml


def refusal(text):
    with pytest.raises(DocumentError) as info:
        load_toml(text)
    return info.value


def test_toml_loads_as_tomllib_reads_it():
    text = '[eval]\nseeds = "0-3"\nx = [[1, 2], {a = 1}]\ns = """ [[[ """\nt = \'[[[\'  # [[[[\n'
    assert load_toml(text) == tomllib.loads(text)


def test_a_key_given_twice_is_refused_with_its_line():
    error = refusal('[eval]\nconcurrency = 1\nconcurrency = 2\n')
    assert error.reason.startswith("not valid TOML: ") and error.line == 3


def test_nested_arrays_past_the_limit_are_refused_before_parsing():
    error = refusal("a = " + "[" * 2000 + "]" * 2000)
    assert f"nested more than {MAX_DEPTH} levels deep" in error.reason and (error.line, error.path) == (1, ("a",))


def test_brackets_inside_strings_and_comments_do_not_count():
    text = 's = "' + "[" * 100 + '"\n' + "# " + "{" * 100 + "\n" + "m = '''" + "[" * 100 + "'''\n"
    assert load_toml(text)["s"] == "[" * 100


def test_tables_nested_past_the_limit_by_dotted_keys_are_refused():
    error = refusal("a" + ".a" * MAX_DEPTH + " = 1\n")
    assert f"nested more than {MAX_DEPTH} levels deep" in error.reason and error.path[0] == "a"


def test_an_integer_past_the_limit_is_refused_with_its_line_and_key():
    error = refusal("[eval.policy_config]\nmax_tokens = " + "9" * 5000 + "\n")
    assert (error.line, error.path) == (2, ("eval", "policy_config", "max_tokens"))
    assert f"the limit is {MAX_INT_DIGITS} digits" in error.reason


def test_a_hex_integer_past_the_limit_is_refused_with_its_path():
    assert refusal("[a]\nb = 0x" + "f" * 2000 + "\n").path == ("a", "b")


def test_digits_in_strings_are_text():
    assert load_toml('a = "' + "9" * 5000 + '"\n')["a"] == "9" * 5000


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab=[]{}.,\"'#\n 019_x"), max_size=80))
def test_any_text_loads_or_is_one_document_error(text):
    try:
        load_toml(text)
    except DocumentError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize("text, path, place, reason", [
    ('[eval]\nconcurrency = 1\nconcurrency = 2\n', ("eval", "concurrency"), (3, 1), "key given twice"),
    ('[eval.policy_config]\n  model = "a"  # [x]\n  model = "b"\n', ("eval", "policy_config", "model"), (3, 3),
     "key given twice"),
    ('[eval]\nseeds = [\n  [1],\n  [2]\n]\nseeds = 2\n', ("eval", "seeds"), (6, 1), "key given twice"),
    ('[eval]\nnote = """\n[other]\n"""\nnote = "x"\n', ("eval", "note"), (5, 1), "key given twice"),
    ('[eval]\n"a.b" = 1\n\'a.b\' = 2\n', ("eval", "a.b"), (3, 1), "key given twice"),
    ('[eval]\nx = 1\n[eval]\n', ("eval",), (3, 2), "table declared twice"),
    ('a = 1\na.b = 2\n', ("a", "b"), (2, 1), "key given twice, or under a key that already holds a value"),
    ('a = {b = 1}\na.c = 2\n', ("a", "c"), (2, 1), "an inline table or array cannot be added to"),
    ('[t]\na = {b = 1, b = 2}\n', ("t", "a"), (2, 1), "key given twice in an inline table: 'b'"),
])
def test_a_key_given_twice_names_the_key_and_its_table(text, path, place, reason):
    error = refusal(text)
    assert (error.path, (error.line, error.column)) == (path, place)
    assert error.reason.startswith(f"not valid TOML: {reason}") and "('" not in error.reason


def test_a_syntax_error_names_the_key_of_its_statement():
    error = refusal('[eval]\nconcurrency = tru\n')
    assert (error.path, error.line) == (("eval", "concurrency"), 2) and error.reason == "not valid TOML: Invalid value"
