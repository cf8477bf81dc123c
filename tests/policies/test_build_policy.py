"""Policies by name from a config mapping, validated strictly."""

import pytest

from proofgym.config import ConfigError
from proofgym.policies import OpenAIChatPolicy, OraclePolicy, ScriptedPolicy, build_policy, policy_names

from ._server import Reply, payload
from ._support import act


@pytest.mark.parametrize("name", ["openai", "vllm", "openai-chat"])
def test_the_openai_names_build_an_openai_chat_policy(name):
    policy = build_policy(name, {"model": "Qwen/Qwen3-0.6B", "inference_url": "http://127.0.0.1:8000/v1?cid=c1",
                                 "temperature": 0.6, "max_tokens": 256, "tool_mode": "json"})
    assert isinstance(policy, OpenAIChatPolicy)
    assert policy.url == "http://127.0.0.1:8000/v1/chat/completions?cid=c1"
    assert (policy.temperature, policy.max_tokens, policy.tool_mode) == (0.6, 256, "json")


def test_scripted_and_oracle_policies():
    assert build_policy("scripted", {"actions": ["a", {"tool": "b"}]}).actions == ["a", {"tool": "b"}]
    assert isinstance(build_policy("scripted", {"actions": []}), ScriptedPolicy)
    oracle = build_policy("oracle", {"env_name": "loan", "env_config": {"chat": False}})
    assert isinstance(oracle, OraclePolicy) and oracle.policy_id == "oracle"


def test_an_unknown_policy_lists_the_known_names():
    with pytest.raises(ConfigError, match=r"unknown policy 'gpt'; expected one of "
                                          r"\['crafter-heuristic', 'crafter-random', 'hf', 'local', 'openai'"):
        build_policy("gpt", {})
    assert policy_names() == ["crafter-heuristic", "crafter-random", "hf", "local", "openai", "openai-chat", "oracle",
                            "scripted", "vllm"]


@pytest.mark.parametrize("name, config, message", [
    ("openai", {"model": "m", "inference_url": "http://h/v1", "temprature": 1}, "temprature: unknown key"),
    ("openai", {"inference_url": "http://h/v1"}, "model: required key missing"),
    ("openai", {"model": "m", "inference_url": "http://h/v1", "max_tokens": 0}, "max_tokens"),
    ("openai", {"model": "m", "inference_url": "ftp://h"}, "inference_url must be an http"),
    ("hf", {"model": "m", "beams": 4}, "beams: unknown key"),
    ("scripted", {"actions": "compile"}, "actions"),
    ("oracle", {"env_name": "nope"}, "unknown environment 'nope'"),
    ("oracle", {"env_name": "loan", "env_config": {"chatty": True}}, "chatty: unknown key"),
])
def test_invalid_configs_are_errors_naming_the_policy_and_the_key(name, config, message):
    with pytest.raises(ConfigError, match=f"policy '{name}'.*{message}"):
        build_policy(name, config)


def test_an_api_key_in_the_config_is_refused():
    with pytest.raises(ConfigError, match="api_key: secrets must not be stored in configs"):
        build_policy("openai", {"model": "m", "inference_url": "http://h/v1", "api_key": "sk-1"})


def test_the_api_key_comes_from_the_named_environment_variable(server, monkeypatch):
    config = {"model": "m", "inference_url": f"{server.base_url}/v1", "api_key_env": "PROOFGYM_TEST_KEY"}
    with pytest.raises(ConfigError, match="'PROOFGYM_TEST_KEY' is not set"):
        build_policy("openai", config)
    monkeypatch.setenv("PROOFGYM_TEST_KEY", "sk-from-env")
    server.script(Reply(payload("openai_tool_call_compile")))
    act(build_policy("openai", config))
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


@pytest.mark.parametrize("config, key", [
    ({"max_tokens": True}, "max_tokens"), ({"temperature": True}, "temperature"), ({"max_retries": "3"}, "max_retries"),
])
def test_policy_configs_are_strict(config, key):
    with pytest.raises(ConfigError, match=rf"policy 'openai': invalid config: {key}: Input should be a valid"):
        build_policy("openai", {"model": "m", "inference_url": "http://127.0.0.1:1/v1", **config})


def test_a_credential_in_the_inference_url_is_never_shown():
    policy = build_policy("openai", {"model": "m", "inference_url": "http://user:hunter2@127.0.0.1:1/v1?cid=c1"})
    assert "hunter2" not in repr(policy) and "***@127.0.0.1:1" in repr(policy) and "cid=c1" in repr(policy)
    with pytest.raises(ConfigError) as info:
        build_policy("openai", {"model": "m", "inference_url": "ftp://user:hunter2@host/v1"})
    assert "hunter2" not in str(info.value) and "ftp://***@host/v1" in str(info.value)
