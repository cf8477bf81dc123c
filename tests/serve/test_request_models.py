import pytest
from pydantic import ValidationError

from proofgym.serve import RolloutRequest


def locs(exc_info):
    return [tuple(error["loc"]) for error in exc_info.value.errors()]


def test_the_reference_contracts_fields_are_accepted():
    request = RolloutRequest.model_validate({
        "run_id": "r", "env": {"env_name": "loan", "env_id": "e1", "config": {}, "seed": 3},
        "policy": {"policy_id": "p", "policy_name": "openai",
                   "config": {"model": "m", "inference_url": "http://h/v1?cid=c", "temperature": 0.2,
                              "max_tokens": 64, "top_p": 0.9}},
        "ops": ["agent", "env", "agent", "env"], "record": {"trajectories": True, "logprobs": False, "value": False,
                                                            "return_trace": True, "trace_format": "full"},
        "on_done": "reset", "safety": {"max_ops": 100000, "max_time_s": 3600.0}, "training_session_id": None,
        "synth_base_url": None, "mode": "rl",
    })
    assert request.env.seed == 3 and request.turn_limit() == 2


def test_unknown_keys_are_errors_naming_the_field():
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "max_turn": 3, "env": {"seeed": 1}})
    assert set(locs(exc_info)) == {("max_turn",), ("env", "seeed")}


@pytest.mark.parametrize("seed", [True, "3", 3.0, -1])
def test_seed_must_be_a_non_negative_json_integer(seed):
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "env": {"seed": seed}})
    assert locs(exc_info) == [("env", "seed")]


def test_the_turn_limit_is_the_smallest_of_max_turns_ops_and_max_ops():
    base = {"run_id": "r"}
    assert RolloutRequest.model_validate(base).turn_limit() is None
    assert RolloutRequest.model_validate({**base, "max_turns": 5}).turn_limit() == 5
    assert RolloutRequest.model_validate({**base, "max_turns": 5, "ops": ["agent", "env"] * 3}).turn_limit() == 3
    assert RolloutRequest.model_validate({**base, "ops": ["policy"] * 4, "safety": {"max_ops": 2}}).turn_limit() == 2


def test_ops_without_an_agent_turn_or_with_unknown_ops_are_refused():
    with pytest.raises(ValidationError, match="at least one 'agent' op"):
        RolloutRequest.model_validate({"run_id": "r", "ops": ["env"]})
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "ops": ["agent", "jump"]})
    assert locs(exc_info) == [("ops", 1)]


def test_logprobs_are_refused_rather_than_silently_missing():
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "record": {"logprobs": True}})
    assert locs(exc_info) == [("record", "logprobs")]


@pytest.mark.parametrize("url", ["ftp://h/v1", "h:8000/v1", "http:///v1"])
def test_the_inference_url_must_be_http_with_a_host(url):
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "policy": {"config": {"inference_url": url}}})
    assert locs(exc_info) == [("policy", "config", "inference_url")]


def test_policy_specific_config_keys_pass_through():
    request = RolloutRequest.model_validate({"run_id": "r", "policy": {"policy_name": "scripted",
                                                                       "config": {"actions": ["x"]}}})
    assert request.policy.config.model_dump(exclude_none=True) == {"actions": ["x"]}


@pytest.mark.parametrize("body", [{"run_id": ""}, {"run_id": "r", "safety": {"max_time_s": 0}},
                                  {"run_id": "r", "max_turns": 0}, {"run_id": "r", "mode": "train"}])
def test_bad_values_are_refused(body):
    with pytest.raises(ValidationError):
        RolloutRequest.model_validate(body)
