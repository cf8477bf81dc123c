import pytest

from proofgym.config import ConfigError, load_run_config

REPO_CONFIG = "configs/run/grant_eligibility.yaml"

MINIMAL_YAML = """
name: t
verifier:
  kind: python
  function: proofgym.domains.grant_rules:verify
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_shipped_config_loads():
    config = load_run_config(REPO_CONFIG)
    assert config.name == "grant_eligibility"
    assert config.parser.decisions == ["permit", "deny"]
    assert config.source is not None and config.source.name == "grant_eligibility.yaml"


def test_yaml_and_toml_are_equivalent(tmp_path):
    toml = write(tmp_path, "run.toml", """
name = "t"
[verifier]
kind = "python"
function = "proofgym.domains.grant_rules:verify"
""")
    yaml = write(tmp_path, "run.yaml", MINIMAL_YAML)
    assert load_run_config(toml).model_dump() == load_run_config(yaml).model_dump()


def test_unknown_key_is_named_with_its_path_and_file(tmp_path):
    path = write(tmp_path, "run.yaml", MINIMAL_YAML + "runtime:\n  max_concurency: 4\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert "runtime.max_concurency: unknown key" in str(info.value)
    assert str(path) in str(info.value)


def test_unknown_verifier_option_is_named(tmp_path):
    path = write(tmp_path, "run.yaml", MINIMAL_YAML + "  retries_please: 3\n")
    with pytest.raises(ConfigError, match="retries_please: unknown key"):
        load_run_config(path)


def test_unknown_verifier_kind_lists_the_known_ones(tmp_path):
    path = write(tmp_path, "run.yaml", "verifier:\n  kind: oracle\n")
    with pytest.raises(ConfigError, match="unknown verifier kind 'oracle'.*python"):
        load_run_config(path)


def test_missing_verifier_is_reported(tmp_path):
    path = write(tmp_path, "run.yaml", "name: t\n")
    with pytest.raises(ConfigError, match="verifier: required key missing"):
        load_run_config(path)


@pytest.mark.parametrize("key", ["api_key", "AMBERTRACE_API_KEY", "auth_token", "password"])
def test_secret_in_config_file_is_an_error(tmp_path, key):
    path = write(tmp_path, "run.yaml", MINIMAL_YAML + f"  {key}: abc123\n")
    with pytest.raises(ConfigError, match="secrets must not be stored in config files"):
        load_run_config(path)


def test_env_var_name_keys_are_allowed(tmp_path):
    from proofgym.config import find_secret_key

    assert find_secret_key({"verifier": {"api_key_env": "AMBERTRACE_API_KEY"}}) is None
    assert find_secret_key({"a": [{"token": "x"}]}) == "a[0].token"


def test_bad_values_are_reported_with_expectations(tmp_path):
    path = write(tmp_path, "run.yaml", MINIMAL_YAML + "runtime:\n  max_concurrency: 0\nreward:\n  on_invalid: zero\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    message = str(info.value)
    assert "runtime.max_concurrency" in message and "reward.on_invalid" in message


@pytest.mark.parametrize("text,expected", [
    ("- a\n- b\n", "expected a mapping"),
    ("a: [unclosed\n", "not valid YAML"),
])
def test_malformed_files(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_run_config(write(tmp_path, "run.yaml", text))


def test_missing_file_and_bad_suffix(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_run_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=r"expected a \.yaml, \.yml, \.toml or \.json config file, got '\.ini'"):
        load_run_config(write(tmp_path, "run.ini", "{}"))


def test_unimportable_verifier_function(tmp_path):
    path = write(tmp_path, "run.yaml", "verifier:\n  kind: python\n  function: nowhere.module:verify\n")
    config = load_run_config(path)
    with pytest.raises(ValueError, match="cannot import module 'nowhere.module'"):
        config.reward_function()


@pytest.mark.parametrize("key", ["hf_token", "access-token", "TOKEN", "github_token_value", "client_secret"])
def test_token_words_are_secrets(key):
    from proofgym.config import find_secret_key

    assert find_secret_key({"policy": {key: "x"}}) == f"policy.{key}"


@pytest.mark.parametrize("key", ["max_tokens", "max_new_tokens", "tokenizer", "tokens_per_step"])
def test_settings_named_after_tokens_are_not_secrets(key):
    from proofgym.config import find_secret_key

    assert find_secret_key({"policy": {key: 64}}) is None
