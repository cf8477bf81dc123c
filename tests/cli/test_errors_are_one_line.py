"""Every error a user's file can cause is one line on stderr naming the file, the key and what was expected:
never a traceback (KeyError, RecursionError, Python's integer digit limit), never a silent last-key-wins."""

import json

import pytest
from typer.testing import CliRunner

from proofgym.cli import app

runner = CliRunner()
VERIFIER = "verifier: {kind: rulebook, domain: grant_eligibility}\n"
DEEP_YAML = "a: " + "[" * 10_000 + "]" * 10_000 + "\n"
BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi")]
)
COMPLETION = json.dumps({"completion": "<decision>{}</decision>"}) + "\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def one_error_line(args, code=2):
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0].removeprefix("error: ")


def score(tmp_path, config_text, completions=COMPLETION):
    return one_error_line(["score", "--config", write(tmp_path, "run.yaml", config_text),
                           "--completions", write(tmp_path, "c.jsonl", completions)])


@pytest.mark.parametrize("config_text, expected", [
    (VERIFIER + "runtime: {timeout_s: 10, timeout_s: 0.001}\n",
     "run.yaml: line 2, column 26: runtime.timeout_s: key given twice (first at line 2, column 11)"),
    ("verifier: {kind: rulebook, domain: nope}\n",
     "run.yaml: verifier.domain: unknown domain 'nope'; known domains: grant_eligibility, loan (a domain folder is "
     "given as a path: ./nope)"),
    (VERIFIER + "runtime: {max_concurrency: true}\n",
     "run.yaml: runtime.max_concurrency: Input should be a valid integer, got true"),
    (VERIFIER + "runtime:\n  retries: " + "9" * 5000 + "\n",
     "run.yaml: line 3, column 12: runtime.retries: an integer of 5000 digits; the limit is 1000 digits"),
    (VERIFIER + "runtime: {bogus: [1]}\n", "run.yaml: runtime.bogus: unknown key"),
])
def test_score_names_the_run_config_and_key(tmp_path, config_text, expected):
    assert score(tmp_path, config_text) == f"{tmp_path}/{expected}"


def test_score_with_a_config_nested_10000_deep_is_one_line(tmp_path):
    line = score(tmp_path, VERIFIER + DEEP_YAML)
    assert line.startswith(f"{tmp_path / 'run.yaml'}: line 2, column 67: a[0]")
    assert line.endswith("nested more than 64 levels deep; the limit is 64 levels")


def test_score_with_the_billion_laughs_is_refused_at_its_first_alias(tmp_path):
    line = score(tmp_path, BILLION_LAUGHS)
    assert line.startswith(f"{tmp_path / 'run.yaml'}: line 2, column 8: b[0]: aliases (*name) are not allowed")


def test_score_with_a_missing_rulebook_names_the_config_and_verifier_path(tmp_path):
    line = score(tmp_path, f"verifier: {{kind: rulebook, path: {tmp_path / 'gone.yaml'}}}\n")
    gone = tmp_path / "gone.yaml"
    assert line.startswith(f"{tmp_path / 'run.yaml'}: verifier.path: {gone}: cannot read the rulebook")


@pytest.mark.parametrize("completions, expected", [
    ('{"completion": "x", "id": ' + "9" * 5000 + "}\n",
     ":1: an integer of 5000 digits at id; the limit is 1000 digits"),
    (COMPLETION + '{"completion": "x", "completion": "y"}\n', ":2: completion: key given twice in one object"),
    ('{"completion": "x", "id": true}\n', ":1: id: Input should be a valid string or a valid integer, got true"),
    ('{"completion": ' + "[" * 2000 + "]" * 2000 + "}\n", ":1: arrays and objects nested more than 64 levels deep"),
    ('{"completion": "x",\n', ":1: column 20: not valid JSON: Expecting property name enclosed in double quotes"),
])
def test_score_names_the_completions_file_line_and_key(tmp_path, completions, expected):
    line = score(tmp_path, VERIFIER, completions)
    assert line.startswith(f"{tmp_path / 'c.jsonl'}{expected}"), line


@pytest.mark.parametrize("text, expected", [
    (DEEP_YAML, ": line 1, column 67: a[0][0][0]…[0][0][0][0]: arrays and mappings nested more than 64 levels deep"),
    (BILLION_LAUGHS, ": line 2, column 8: b[0]: aliases (*name) are not allowed"),
    ("name: x\nname: y\n", ": line 2, column 1: name: key given twice (first at line 1, column 1)"),
])
def test_rules_validate_is_one_line(tmp_path, text, expected):
    line = one_error_line(["rules", "validate", write(tmp_path, "rb.yaml", text)], code=1)
    assert line.startswith(f"{tmp_path / 'rb.yaml'}{expected}"), line


def test_rules_query_names_the_facts_file_and_key(tmp_path):
    facts = write(tmp_path, "facts.json", '{"age": ' + "9" * 5000 + "}")
    line = one_error_line(["rules", "query", "--domain", "grant_eligibility", "--facts", facts])
    assert line == f"{facts}: an integer of 5000 digits at age; the limit is 1000 digits"


@pytest.mark.parametrize("env_config, expected", [
    ('{"a": ' + "[" * 2000 + "]" * 2000 + "}",
     "--env-config: arrays and objects nested more than 64 levels deep at a[0]"),
    ('{"max_turns": 1, "max_turns": 2}', "--env-config: max_turns: key given twice in one object"),
    ('{"run_config": "x", "api_key": "k"}', "--env-config: api_key: the key names a credential: secrets must not be"),
    ('{"max_turns": true}', "environment 'loan': invalid config: max_turns: Input should be a valid integer"),
])
def test_serve_env_config_json_is_one_line(tmp_path, env_config, expected):
    line = one_error_line(["serve", "loan", "--env-config", env_config, "--traces", str(tmp_path / "t.db")])
    assert line.startswith(expected), line


def test_serve_env_config_file_nested_10000_deep_is_one_line(tmp_path):
    path = write(tmp_path, "env.yaml", DEEP_YAML)
    line = one_error_line(["serve", "loan", "--env-config", path, "--traces", str(tmp_path / "t.db")])
    assert line.startswith(f"{path}: line 1, column 67: a[0]") and "nested more than 64 levels deep" in line


def test_eval_refuses_a_credential_in_the_inference_url_without_printing_it(tmp_path):
    path = write(tmp_path, "eval.toml", '[evaluation]\nenv_name = "loan"\npolicy_name = "openai"\nseeds = [0]\n'
                                        '[evaluation.policy_config]\nmodel = "m"\n'
                                        'inference_url = "http://user:hunter2@gpu:8000/v1"\n')
    line = one_error_line(["eval", "--config", path])
    assert line.startswith(f"{path}: evaluation.policy_config.inference_url: the value is a URL with credentials")
    assert "hunter2" not in line
