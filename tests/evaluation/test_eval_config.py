import pytest

from proofgym.config import ConfigError
from proofgym.evaluation import load_eval_config, parse_eval_config, parse_seeds

from ._support import write_eval_toml


def section(**eval_keys):
    return parse_eval_config({"eval": {"env_name": "loan", "policy_name": "oracle", "seeds": [0], **eval_keys}}).eval


@pytest.mark.parametrize("value, seeds", [([3, 1, 2], [3, 1, 2]), ("0-3", [0, 1, 2, 3]), (5, [5]),
                                          ("0-1, 5, 7-8", [0, 1, 5, 7, 8]), ("4", [4])])
def test_seeds_are_a_list_or_ranges(value, seeds):
    assert parse_seeds(value) == seeds


@pytest.mark.parametrize("value, message", [("3-1", "ends before it starts"), ([1, 1], "seeds repeat"),
                                            ("0-3,2", "seeds repeat"), ([-1], ">= 0"), ([True], ">= 0"),
                                            ("a-b", "not a seed"), ([], "non-empty"), (1.5, "non-empty")])
def test_bad_seeds_are_refused(value, message):
    with pytest.raises(ValueError, match=message):
        parse_seeds(value)


def test_unknown_keys_and_bad_types_are_named_with_the_file(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "oracle", "seeds": [0],
                                                 "concurency": 4, "max_turns": "many"},
                           policy_config={"temperature": "hot"})
    with pytest.raises(ConfigError) as exc_info:
        load_eval_config(path)
    message = str(exc_info.value)
    assert str(path) in message
    assert "eval.concurency: unknown key" in message
    assert "eval.max_turns:" in message and "eval.policy_config.temperature:" in message


def test_the_reference_keys_are_accepted(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {
        "app_id": "a", "task_app_url": "http://127.0.0.1:8000", "model": "Qwen/Qwen3-0.6B", "seeds": "0-3",
        "max_turns": 5, "concurrency": 2, "env_name": "verilog", "policy_name": "openai", "trace_format": "compact",
        "return_trace": True}, env_config={"max_turns": 5}, policy_config={
        "provider": "vllm", "model": "m", "inference_url": "http://127.0.0.1:8001/v1", "temperature": 0.2,
        "top_p": 0.9, "max_tokens": 256, "max_llm_calls": 3})
    config = load_eval_config(path).eval
    assert config.turn_limit == 3 and config.seeds == [0, 1, 2, 3]
    assert config.policy_options() == {"model": "m", "inference_url": "http://127.0.0.1:8001/v1",
                                       "temperature": 0.2, "top_p": 0.9, "max_tokens": 256}


def test_secrets_in_an_eval_file_are_refused(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "openai", "seeds": [0]},
                           policy_config={"api_key": "sk-123"})
    with pytest.raises(ConfigError, match="secrets must not be stored"):
        load_eval_config(path)


def test_the_policy_follows_the_provider_when_no_name_is_given():
    assert section(policy_name=None, policy_config={"provider": "groq", "model": "m"}).resolved_policy_name == \
        "openai"
    assert section(policy_name=None, policy_config={"provider": "hf", "model": "m"}).resolved_policy_name == "hf"
    assert section(policy_config={"provider": "vllm"}).resolved_policy_name == "oracle"


def test_eval_model_is_the_default_policy_model():
    assert section(model="a", policy_config={}).policy_options() == {"model": "a"}
    assert section(model="a", policy_config={"model": "b"}).policy_options() == {"model": "b"}


@pytest.mark.parametrize("keys, message", [
    ({"env_name": None}, "env_name is required"),
    ({"policy_name": None}, "policy_name is required"),
    ({"task_app_url": "localhost:8000"}, "http:// or https://"),
    ({"concurrency": 0}, "greater than or equal to 1"),
    ({"trace_format": "verbose"}, "compact"),
])
def test_an_unrunnable_config_is_refused(keys, message):
    data = {"env_name": "loan", "policy_name": "oracle", "seeds": [0], **keys}
    with pytest.raises(ConfigError, match=message):
        parse_eval_config({"eval": {k: v for k, v in data.items() if v is not None}})
