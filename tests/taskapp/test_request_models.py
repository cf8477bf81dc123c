import pytest
from pydantic import ValidationError

from proofgym.taskapp import RolloutRequest


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


@pytest.mark.parametrize("seed", [True, "3", 3.5, -1, 2.0**63])
def test_seed_must_be_a_non_negative_json_integer(seed):
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "env": {"seed": seed}})
    assert locs(exc_info) == [("env", "seed")]


def test_an_integral_float_is_a_json_integer():
    # JSON Schema's "integer" is a number without a fractional part: 251129.0 is one, and the schema says integer.
    request = RolloutRequest.model_validate({"run_id": "r", "env": {"seed": 251129.0}, "max_turns": 3.0,
                                             "safety": {"max_ops": 2.0}})
    assert (request.env.seed, request.max_turns, request.safety.max_ops) == (251129, 3, 2)
    assert type(request.env.seed) is int


@pytest.mark.parametrize("field, value", [("max_turns", "3"), ("max_turns", True), ("record", {"trajectories": 1}),
                                          ("record", {"logprobs": 0}), ("safety", {"max_time_s": "1"}),
                                          ("mode", 1)])
def test_values_of_the_wrong_json_type_are_refused_not_coerced(field, value):
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", field: value})
    assert locs(exc_info)[0][0] == field


def test_an_empty_inference_url_means_none():
    request = RolloutRequest.model_validate({"run_id": "r", "policy": {"config": {"inference_url": ""}}})
    assert request.policy.config.inference_url is None


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


@pytest.mark.parametrize("url", ["ftp://h/v1", "h:8000/v1", "http:///v1", "http://h/a b", "http://bücher.de/v1",
                                 "http://[1:2]/v1", "http://[::1/v1", " http://h/v1"])
def test_the_inference_url_must_be_http_with_a_host(url):
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "policy": {"config": {"inference_url": url}}})
    assert locs(exc_info) == [("policy", "config", "inference_url")]


@pytest.mark.parametrize("url", ["http://h/v1", "HTTPS://user:pw@h:8000/v1?cid=c#f", "http://[::1]:8000/v1",
                                 "http://[::ffff:10.0.0.1]/v1", "http://xn--bcher-kva.de/v1?q=%C3%BC"])
def test_http_urls_with_a_host_are_accepted(url):
    request = RolloutRequest.model_validate({"run_id": "r", "policy": {"config": {"inference_url": url}}})
    assert request.policy.config.inference_url == url


def test_policy_specific_config_keys_pass_through():
    request = RolloutRequest.model_validate({"run_id": "r", "policy": {"policy_name": "scripted",
                                                                       "config": {"actions": ["x"]}}})
    assert request.policy.config.model_dump(exclude_none=True) == {"actions": ["x"]}


@pytest.mark.parametrize("body", [{"run_id": ""}, {"run_id": "r", "safety": {"max_time_s": 0}},
                                  {"run_id": "r", "max_turns": 0}, {"run_id": "r", "mode": "train"}])
def test_bad_values_are_refused(body):
    with pytest.raises(ValidationError):
        RolloutRequest.model_validate(body)


def test_ops_may_be_objects_as_the_reference_client_types_them():
    request = RolloutRequest.model_validate({"run_id": "r", "ops": [{"type": "agent"}, {"type": "env"}, "agent"]})
    assert request.ops == ["agent", "env", "agent"] and request.turn_limit() == 2
    with pytest.raises(ValidationError) as exc_info:
        RolloutRequest.model_validate({"run_id": "r", "ops": ["agent", {"type": "agent", "action": 1}]})
    assert locs(exc_info) == [("ops", 1)] and '{"type"' in str(exc_info.value)


def test_the_structured_trace_format_is_accepted():
    request = RolloutRequest.model_validate({"run_id": "r", "record": {"return_trace": True,
                                                                        "trace_format": "structured"}})
    assert request.record.trace_format == "structured"
