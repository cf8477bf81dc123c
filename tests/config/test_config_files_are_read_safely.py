"""Every config file (YAML, TOML, JSON) is read by one reader: a key given twice, aliases, deep nesting and huge
integers are refused with one line naming the file, the line or key, and what was expected."""

import json
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from proofgym.config import ConfigError, load_run_config, read_config_file

VERIFIER_YAML = "verifier: {kind: rulebook, domain: grant_eligibility}\n"
VERIFIER_TOML = '[verifier]\nkind = "rulebook"\ndomain = "grant_eligibility"\n'
BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi")]
)


def refused(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize("name, text, where", [
    ("run.yaml", VERIFIER_YAML + "runtime: {timeout_s: 10, timeout_s: 0.001}\n",
     "line 2, column 26: runtime.timeout_s"),
    ("run.yaml", VERIFIER_YAML + "runtime:\n  timeout_s: 10\n  timeout_s: 1\n", "line 4, column 3: runtime.timeout_s"),
    ("run.json", '{"verifier": {"kind": "rulebook", "domain": "loan"}, "runtime": {"timeout_s": 10, "timeout_s": 1}}',
     "runtime.timeout_s"),
])
def test_a_key_given_twice_is_refused_not_last_one_wins(tmp_path, name, text, where):
    message = refused(tmp_path, name, text)
    assert message.startswith(f"{where}: key given twice")


def test_toml_refuses_a_key_given_twice_naming_the_key_its_table_and_line(tmp_path):
    message = refused(tmp_path, "run.toml", VERIFIER_TOML + "[runtime]\ntimeout_s = 10\ntimeout_s = 0.001\n")
    assert message.startswith("line 6, column 1: runtime.timeout_s: not valid TOML: key given twice")


@pytest.mark.parametrize("name, text", [
    ("run.yaml", VERIFIER_YAML + "parser: " + "[" * 10_000 + "]" * 10_000 + "\n"),
    ("run.yaml", VERIFIER_YAML + "parser:" + "".join("\n" + "  " * i + f"k{i}:" for i in range(1, 2_000)) + " 1\n"),
    ("run.toml", VERIFIER_TOML + "parser = " + "[" * 2_000 + "]" * 2_000 + "\n"),
    ("run.toml", VERIFIER_TOML + "p" + ".p" * 2_000 + " = 1\n"),
    ("run.json", '{"parser": ' + "[" * 2_000 + "]" * 2_000 + "}"),
])
def test_nesting_past_the_limit_is_one_line_not_a_recursion_error(tmp_path, name, text):
    message = refused(tmp_path, name, text)
    assert "nested more than 64 levels deep" in message and "the limit is 64 levels" in message


@pytest.mark.parametrize("name, text, where", [
    ("run.yaml", VERIFIER_YAML + "runtime:\n  retries: " + "9" * 5000 + "\n", "line 3, column 12: runtime.retries"),
    ("run.toml", VERIFIER_TOML + "[runtime]\nretries = " + "9" * 5000 + "\n", "line 5, column 11: runtime.retries"),
    ("run.json", '{"runtime": {"retries": ' + "9" * 5000 + "}}", "an integer of 5000 digits at runtime.retries"),
])
def test_a_5000_digit_integer_names_the_file_line_and_key(tmp_path, name, text, where):
    message = refused(tmp_path, name, text)
    assert where in message and "5000 digits" in message and "the limit is 1000 digits" in message
    assert "Exceeds the limit" not in message


def test_the_billion_laughs_is_refused_before_it_expands(tmp_path):
    started = time.process_time()
    message = refused(tmp_path, "run.yaml", BILLION_LAUGHS)
    assert message.startswith("line 2, column 8: b[0]: aliases (*name) are not allowed")
    assert time.process_time() - started < 5  # 18.7 s of CPU before its first error, when it expanded


def test_a_value_yaml_cannot_build_names_its_key(tmp_path):
    message = refused(tmp_path, "run.yaml", VERIFIER_YAML + "name: 2024-13-01\n")
    assert message == "line 2, column 7: name: cannot read this value: month must be in 1..12"


def test_json_config_files_are_read_like_yaml_and_toml(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"verifier": {"kind": "rulebook", "domain": "loan"}, "runtime": {"retries": 1}}))
    assert load_run_config(path).runtime.retries == 1


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=40,
)


def deep(value, levels):
    for _ in range(levels):
        value = {"k": [value]}
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values, levels=st.integers(0, 120), syntax=st.sampled_from(["yaml", "json"]))
def test_any_nested_data_reads_as_a_mapping_or_one_config_error(tmp_path, value, levels, syntax):
    data = {"top": deep(value, levels)}
    path = tmp_path / f"c.{syntax}"
    path.write_text(yaml.safe_dump(data) if syntax == "yaml" else json.dumps(data))
    try:
        assert read_config_file(path) == data
    except ConfigError as exc:
        assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from('ab:=-{}[]",&*!#\n 09.\'\\x'), max_size=120),
       suffix=st.sampled_from([".yaml", ".toml", ".json"]))
def test_any_text_reads_as_a_mapping_or_one_config_error(tmp_path, text, suffix):
    path = tmp_path / f"c{suffix}"
    path.write_text(text)
    try:
        assert isinstance(read_config_file(path), dict)
    except ConfigError as exc:
        assert "\n" not in str(exc)
