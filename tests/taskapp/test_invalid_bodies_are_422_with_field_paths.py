import json

import pytest

from ._support import rollout_body


def detail_locs(response):
    assert response.status_code == 422, response.text
    return [tuple(entry["loc"]) for entry in response.json()["detail"]]


def test_a_body_that_is_not_json_is_422(make_client):
    response = make_client().post("/rollout", content=b"{oops", headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"


def test_a_missing_field_and_a_typo_are_named(make_client):
    response = make_client().post("/rollout", json={"env": {"sed": 1}})
    assert set(detail_locs(response)) == {("body", "run_id"), ("body", "env", "sed")}


def test_a_wrong_type_deep_in_the_body_is_named(make_client):
    response = make_client().post("/rollout", json=rollout_body(record={"trace_format": "verbose"}))
    assert detail_locs(response) == [("body", "record", "trace_format")]


def test_a_policy_config_error_names_the_policy_key(make_client):
    body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": "http://127.0.0.1:9/v1",
                                                             "temperature": 7})
    assert detail_locs(make_client().post("/rollout", json=body)) == [("body", "policy", "config", "temperature")]


def test_an_unknown_policy_key_is_named(make_client):
    body = rollout_body(policy_name="scripted", policy_config={"actions": ["x"], "actionz": []})
    assert detail_locs(make_client().post("/rollout", json=body)) == [("body", "policy", "config", "actionz")]


def test_a_text_only_policy_asked_for_frames_is_named(make_client):
    body = rollout_body(policy_name="scripted", policy_config={"actions": ["x"], "image_only_mode": True})
    response = make_client().post("/rollout", json=body)
    assert detail_locs(response) == [("body", "policy", "config", "image_only_mode")]
    assert "shows its model the observation's text only" in response.json()["detail"][0]["msg"]


def test_a_policy_the_app_does_not_accept_is_named(make_client):
    body = rollout_body(policy_name="hf", policy_config={"model": "/etc"})
    response = make_client().post("/rollout", json=body)
    assert detail_locs(response) == [("body", "policy", "policy_name")]
    assert make_client(policies=["scripted"]).post("/rollout", json=rollout_body()).status_code == 422


def test_a_request_cannot_make_the_app_send_its_secrets(make_client):
    body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": "http://attacker/v1",
                                                             "api_key_env": "ENVIRONMENT_API_KEY"})
    response = make_client().post("/rollout", json=body)
    assert detail_locs(response) == [("body", "policy", "config", "api_key_env")]


def test_the_oracle_plays_only_the_apps_environment(make_client):
    body = rollout_body(policy_config={"env_name": "loan"})
    assert detail_locs(make_client().post("/rollout", json=body)) == [("body", "policy", "config", "env_name")]


def test_env_config_keys_are_the_operators_unless_allowed(make_client):
    body = rollout_body()
    body["env"]["config"] = {"seed_offset": 7}
    response = make_client().post("/rollout", json=body)
    assert detail_locs(response) == [("body", "env", "config", "seed_offset")]
    assert "keys a request may set: index, split" in response.json()["detail"][0]["msg"]  # the reference client's
    assert make_client(env_overrides=["seed_offset"]).post("/rollout", json=body).status_code == 200


def test_repeating_the_apps_own_env_config_is_fine(make_client):
    body = rollout_body()
    body["env"]["config"] = {"seed_offset": 5}
    assert make_client(env_config={"seed_offset": 5}).post("/rollout", json=body).status_code == 200


@pytest.mark.parametrize("config, key, kind", [({"max_turns": -1}, "max_turns", "greater_than_equal"),
                                               ({"max_turns": 0}, "max_turns", "greater_than_equal"),
                                               ({"bogus": 1}, "bogus", "extra_forbidden"),
                                               ({"chatt": True}, "chatt", "extra_forbidden")])
def test_an_invalid_allowed_env_config_is_named_by_path(make_client, config, key, kind):
    body = rollout_body()
    body["env"]["config"] = config
    response = make_client(env_overrides=["*"]).post("/rollout", json=body)
    assert detail_locs(response) == [("body", "env", "config", key)]
    [detail] = response.json()["detail"]
    assert detail["type"] == kind and detail["input"] == config[key] and detail["msg"]


def test_every_invalid_rulebook_env_config_key_is_named(make_client):
    body = rollout_body()
    body["env"]["config"] = {"max_turns": -1, "bogus": 1}
    response = make_client(env_overrides=["*"]).post("/rollout", json=body)
    assert set(detail_locs(response)) == {("body", "env", "config", "max_turns"), ("body", "env", "config", "bogus")}


def test_an_invalid_verilog_env_config_is_named_by_path(make_client):
    body = rollout_body()
    body["env"]["config"] = {"judge": {"timeout_s": -1}}
    response = make_client("verilog", env_overrides=["judge"]).post("/rollout", json=body)
    assert detail_locs(response) == [("body", "env", "config", "judge", "timeout_s")]


def test_an_env_name_of_another_app_is_404(make_client):
    body = rollout_body()
    body["env"]["env_name"] = "verilog"
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 404 and "grant_eligibility" in response.json()["detail"]


@pytest.mark.parametrize("raw, loc", [
    # Non-finite numbers in a rejected field: the 422 echoed them and JSON encoding refused NaN (a 500).
    (b'{"run_id":"n","policy":{"policy_name":"oracle"},"safety":{"max_time_s":NaN}}', ("safety", "max_time_s")),
    (b'{"run_id":"n","policy":{"policy_name":"oracle"},"safety":{"max_ops":Infinity}}', ("safety", "max_ops")),
    (b'{"run_id":"n","policy":{"policy_name":"oracle"},"max_turns":1e309}', ("max_turns",)),
    (b'{"run_id":"n","policy":{"policy_name":"oracle"},"env":{"seed":-Infinity}}', ("env", "seed")),
    (b'{"run_id":"n","policy":{"policy_name":"oracle"},"env":{"config":{"seed_offset":NaN}}}', ("env", "config")),
    # A lone surrogate in a validated string: writing the 422 raised UnicodeEncodeError (a 500).
    (b'{"run_id":"\\ud800"}', ("run_id",)),
    (b'{"run_id":"n","policy":{"policy_name":"\\udc00\\ud800"}}', ("policy", "policy_name")),
    # An id the store would not keep as sent.
    (b'{"run_id":"a\\u0000b"}', ("run_id",)),
    (b'{"run_id":"n","policy":{"policy_name":"scripted","config":{"actions":[],"policy_id":"\\u0000"}}}',
     ("policy", "config", "policy_id")),
])
def test_a_body_no_encoder_could_echo_as_sent_is_a_422_naming_the_field(make_client, raw, loc):
    response = make_client().post("/rollout", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    detail = json.loads(response.content.decode("utf-8"), parse_constant=pytest.fail)["detail"]
    assert tuple(detail[0]["loc"][1:len(loc) + 1]) == loc


@pytest.mark.parametrize("raw, loc, limit", [
    (b'{"run_id":"n","env":{"config":' + b"[" * 10_000 + b"]" * 10_000 + b"}}", ["env", "config"], "64 levels"),
    (b"[" * 100 + b"]" * 100, [], "64 levels"),
    (b'{"run_id":"n","env":{"seed":' + b"9" * 5000 + b"}}", ["env", "seed"], "1000 digits"),
])
def test_json_past_the_depth_or_integer_limit_is_refused_before_parsing_naming_the_limit(make_client, raw, loc,
                                                                                         limit):
    response = make_client().post("/rollout", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    [detail] = response.json()["detail"]
    assert detail["loc"][:len(loc) + 1] == ["body", *loc] and f"the limit is {limit}" in detail["msg"]


def test_a_body_that_is_not_utf8_is_400(make_client):
    response = make_client().post("/rollout", content=b'{"run_id":"\xff"}',
                                  headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["detail"]
