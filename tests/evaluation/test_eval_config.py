import pytest

from proofgym.config import ConfigError
from proofgym.evaluation import load_eval_config, parse_eval_config, parse_seeds

from ._support import write_eval_toml


def section(**eval_keys):
    keys = {"env_name": "loan", "policy_name": "oracle", "seeds": [0], **eval_keys}
    return parse_eval_config({"evaluation": keys}).evaluation


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


def test_bad_types_are_named_with_the_file(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "oracle", "seeds": [0],
                                                 "concurency": 4, "max_turns": "many"},
                           policy_config={"temperature": "hot"})
    with pytest.raises(ConfigError) as exc_info:
        load_eval_config(path)
    message = str(exc_info.value)
    assert str(path) in message
    assert "evaluation.max_turns:" in message and "evaluation.policy_config.temperature:" in message
    assert "concurency" not in message  # an unknown key is a warning, not an error


def test_unknown_keys_are_one_warning_line_and_the_judge_is_read(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "oracle", "seeds": [0],
                                                 "concurency": 4, "use_vision": False})
    path.write_text(path.read_text() + '\n[evaluation.judge]\npath = "judges/j.py"\nname = "Backend"\ntimeout_s = 45\n')
    config = load_eval_config(path).evaluation
    assert config.ignored_keys == ["concurency", "use_vision"] and config.concurrency == 4
    [unknown] = config.warnings()
    assert unknown.startswith("evaluation: ignoring unknown keys concurency, use_vision (proofgym eval reads "
                              "api_key_env,")
    assert config.judge.path == "judges/j.py" and config.judge.name == "Backend" and config.judge.timeout_s == 45
    assert section().warnings() == []


def test_a_policy_name_that_is_no_proofgym_policy_yields_to_the_provider():
    foreign = section(policy_name="verilog-designer", policy_config={"provider": "groq", "model": "m"})
    assert foreign.resolved_policy_name == "openai"
    assert foreign.warnings() == ["evaluation.policy_name: 'verilog-designer' is not a proofgym policy; using "
                                  "'openai', the policy of policy_config.provider"]
    by_url = section(policy_name="crafter-react", policy_config={"inference_url": "http://127.0.0.1:1/v1"})
    assert by_url.resolved_policy_name == "openai" and "policy_config.inference_url" in by_url.warnings()[0]
    # Without a model server to fall back on, the name stands; a task app knows its own policies.
    remote = section(policy_name="verilog-designer", task_app_url="http://127.0.0.1:1", policy_config={})
    assert remote.resolved_policy_name == "verilog-designer"


def test_a_policy_name_that_names_no_policy_is_refused_with_its_file_when_the_eval_runs_here(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "verilog-designer", "seeds": [0]})
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value).startswith(f"{path}: evaluation.policy_name: unknown policy 'verilog-designer'; "
                                      "expected one of ")


def test_the_reference_keys_are_accepted(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {
        "app_id": "a", "task_app_url": "http://127.0.0.1:8000", "model": "Qwen/Qwen3-0.6B", "seeds": "0-3",
        "max_turns": 5, "concurrency": 2, "env_name": "verilog", "policy_name": "openai", "trace_format": "compact",
        "return_trace": True}, env_config={"max_turns": 5}, policy_config={
        "provider": "vllm", "model": "m", "inference_url": "http://127.0.0.1:8001/v1", "temperature": 0.2,
        "top_p": 0.9, "max_tokens": 256, "max_llm_calls": 3})
    config = load_eval_config(path).evaluation
    assert config.turn_limit == 3 and config.seeds == [0, 1, 2, 3]
    assert config.policy_options() == {"model": "m", "inference_url": "http://127.0.0.1:8001/v1",
                                       "temperature": 0.2, "top_p": 0.9, "max_tokens": 256}


def test_the_vision_keys_go_to_the_policy_and_unrendered_frames_are_a_warning():
    keys = {"policy_name": "openai", "policy_config": {"model": "m", "inference_url": "http://127.0.0.1:8001/v1",
                                                       "use_vision": True, "image_only_mode": False}}
    framed = section(env_config={"use_vision": True}, **keys)
    assert framed.policy_options()["use_vision"] is True and framed.policy_options()["image_only_mode"] is False
    assert framed.warnings() == []
    [line] = section(**keys).warnings()
    assert line == ("evaluation.policy_config: use_vision shows the model the observation's frame, and an observation "
                    "carries one only when the environment renders it (crafter: use_vision = true in "
                    "[evaluation.env_config])")


def test_frames_asked_for_turn_on_the_rendering_of_an_environment_that_takes_the_key():
    pytest.importorskip("crafter", reason="the crafter environment needs the crafter package (pip install crafter)")
    for asked in ({"use_vision": True}, {"image_only_mode": True}):
        keys = {"policy_name": "openai", "policy_config": {"model": "m", "inference_url": "http://h:1/v1", **asked}}
        framed = section(env_name="crafter", env_config={"max_turns": 50}, **keys)
        assert framed.env_config == {"max_turns": 50, "use_vision": True}
        [key] = asked
        assert framed.warnings() == [f"evaluation.env_config: use_vision = true (set for policy_config.{key}: the "
                                     "environment renders the frame the model is shown)"]
        kept = section(env_name="crafter", env_config={"use_vision": False}, **keys)
        assert kept.env_config == {"use_vision": False}
        [line] = kept.warnings()
        assert line.startswith("evaluation.policy_config: ") and "use_vision = true in [evaluation.env_config]" in line
    text_only = section(env_name="crafter", policy_name="openai", policy_config={"model": "m"})
    assert text_only.env_config == {} and text_only.warnings() == []


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
        parse_eval_config({"evaluation": {k: v for k, v in data.items() if v is not None}})


OPENAI = {"env_name": "loan", "policy_name": "openai", "seeds": [0]}
FAKE_KEY = "sk-" + "a1B2c3D4e5F6g7H8i9J0"


@pytest.mark.parametrize("policy_config, where, what", [
    ({"extra_body": {"authorization": f"Bearer {FAKE_KEY}"}}, "evaluation.policy_config.extra_body.authorization",
     "the key names a credential"),
    ({"private_key": "x"}, "evaluation.policy_config.private_key", "the key names a credential"),
    ({"access_key": "x"}, "evaluation.policy_config.access_key", "the key names a credential"),
    ({"extra_body": {"headers": [["X-Trace", f"Bearer {FAKE_KEY}"]]}},
     "evaluation.policy_config.extra_body.headers[0][1]", "the value is a bearer token"),
    ({"extra_body": {"user": FAKE_KEY}}, "evaluation.policy_config.extra_body.user",
     "the value is an API key (sk-...)"),
    ({"inference_url": "http://user:hunter2@gpu:8000/v1"}, "evaluation.policy_config.inference_url",
     "the value is a URL with credentials"),
    ({"inference_url": "http://gpu:8000/v1?cid=c1&api_key=hunter2"}, "evaluation.policy_config.inference_url",
     "the value is a URL with credentials"),
])
def test_credentials_anywhere_in_an_eval_file_are_refused_without_being_repeated(tmp_path, policy_config, where,
                                                                                 what):
    path = write_eval_toml(tmp_path / "e.toml", OPENAI, policy_config={"model": "m", **policy_config})
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: {what}") and "secrets must not be stored" in message
    assert "hunter2" not in message and FAKE_KEY not in message


def test_a_correlation_id_in_the_inference_url_is_not_a_credential(tmp_path):
    url = "http://127.0.0.1:8001/v1?cid=trace_abc"
    path = write_eval_toml(tmp_path / "e.toml", OPENAI, policy_config={"model": "m", "inference_url": url,
                                                                       "api_key_env": "MY_KEY"})
    assert load_eval_config(path).evaluation.policy_options()["inference_url"] == url


@pytest.mark.parametrize("eval_keys, policy_config, where", [
    ({"concurrency": True}, {}, "evaluation.concurrency: Input should be a valid integer, got true"),
    ({"max_time_s": True}, {}, "evaluation.max_time_s: Input should be a valid number, got true"),
    ({}, {"max_tokens": True}, "evaluation.policy_config.max_tokens: Input should be a valid integer, got true"),
    ({}, {"temperature": False}, "evaluation.policy_config.temperature: Input should be a valid number, got false"),
])
def test_booleans_are_not_numbers(tmp_path, eval_keys, policy_config, where):
    path = write_eval_toml(tmp_path / "e.toml", {**OPENAI, **eval_keys}, policy_config={"model": "m", **policy_config})
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value) == f"{path}: {where}"
