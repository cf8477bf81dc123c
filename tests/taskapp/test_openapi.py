"""The task app's published OpenAPI schema is the truth: schemathesis (positive and negative data, every check, the
API key) against one app per registered environment, and the schema's parts checked directly.

The fuzzed apps accept the ``scripted`` and ``oracle`` policies only: a schema-valid ``openai`` request would make
the app call whatever inference URL was generated. The environments' request schemas differ only in the env
name and the oracle's config, but each environment plays the generated actions differently, so each is fuzzed.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
from _schemathesis import API_KEY, FreshApp, schema_of
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from proofgym.envs import env_names
from proofgym.taskapp import RolloutRequest, create_app
from proofgym.taskapp._correlation import URL_PARAMETERS, correlation_id
from proofgym.taskapp._errors import RequestError

FUZZED_POLICIES = ("scripted", "oracle")


def _make(env_name):
    return lambda store: create_app(env_name, api_key=API_KEY, store=store, policies=FUZZED_POLICIES)


APPS = {env_name: FreshApp(_make(env_name)) for env_name in env_names()}
SCHEMAS = {env_name: schema_of(app, app.make(None).openapi()) for env_name, app in APPS.items()}


@pytest.fixture(scope="module", autouse=True)
def _trace_stores(tmp_path_factory):
    for app in APPS.values():
        app.directory = tmp_path_factory.mktemp("traces")


def _agreeing_correlation_ids(_context, case):
    """Positive bodies obey the one rule the schema can only describe: correlation ids given in several places agree.

    JSON Schema cannot say two fields are equal, so the ids generated for ``trace_correlation_id``,
    ``policy.config.trace_correlation_id`` and the inference URL's ``cid`` are made one (the URL's, when it has one).
    """
    body = case.body
    if case.meta is None or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return case
    config = (body.get("policy") or {}).get("config") or {}
    url = config.get("inference_url") or ""
    query = parse_qs(urlsplit(url).query)
    in_url = {value.strip() for name in URL_PARAMETERS for value in query.get(name, ()) if value.strip()}
    chosen = next(iter(in_url)) if len(in_url) == 1 else body.get("trace_correlation_id")
    for holder in (body, config):
        if holder.get("trace_correlation_id") is not None and chosen is not None:
            holder["trace_correlation_id"] = chosen
    return case


def _index_is_the_seed(_context, case):
    """Positive bodies obey the other rule the schema only describes: within a split, ``env.config.index`` and
    ``env.seed`` are the same position (the reference's client sends both, equal)."""
    body = case.body
    if case.meta is None or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return case
    env = body.get("env")
    config = env.get("config") if isinstance(env, dict) else None
    index = config.get("index") if isinstance(config, dict) else None
    # An integer as JSON Schema means one (3.0 too); an omitted seed is 0, which must agree as well.
    if isinstance(index, (int, float)) and not isinstance(index, bool) and float(index).is_integer():
        env["seed"] = index
    return case


def _ids_agree(_context, case):
    """What the repair above cannot fix (a URL with two different ids) is not sent as positive data."""
    if case.meta is None or not case.meta.generation.mode.is_positive or not isinstance(case.body, dict):
        return True
    try:
        correlation_id(RolloutRequest.model_validate(case.body))
    except (RequestError, ValueError):
        return False
    return True


for _schema in SCHEMAS.values():
    _schema.hook("map_case")(_agreeing_correlation_ids)
    _schema.hook("map_case")(_index_is_the_seed)
    _schema.hook("filter_case")(_ids_agree)


def test_every_environment_is_fuzzed():
    assert set(SCHEMAS) == set(env_names()) >= {"grant_eligibility", "loan", "verilog"}


def _fuzzed(schema):
    @schema.parametrize()
    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    def test(case):
        case.call_and_validate()  # every check, positive and negative data, with the key (see _schemathesis)

    return test


test_grant_eligibility_task_app_matches_its_schema = _fuzzed(SCHEMAS["grant_eligibility"])
# Each fuzz run costs about 6 s; loan and verilog (other environments of the same app) under -m slow, in
# test_openapi_other_environments.py.


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app("grant_eligibility", api_key=API_KEY, store=tmp_path / "t.db")) as client:
        yield client


def test_the_served_schema_is_the_published_one_and_needs_the_key(client):
    assert client.get("/openapi.json", headers={"X-API-Key": API_KEY}).json() == client.app.openapi()
    assert client.get("/openapi.json").status_code == 401


def test_the_key_schemes_are_declared_on_every_route_but_root_and_health(client):
    schema = client.app.openapi()
    assert schema["components"]["securitySchemes"] == {
        "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "the server's API key"},
        "BearerToken": {"type": "http", "scheme": "bearer", "description": "the server's API key as a bearer token"},
        "ApiKeysHeader": {"type": "apiKey", "in": "header", "name": "X-API-Keys",
                          "description": "comma-separated keys (the reference client sends a key and its aliases "
                                         "there); one of them must be the server's"}}
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            if path in ("/", "/health"):
                assert "security" not in operation and "401" not in operation["responses"]
            else:
                assert operation["security"] == [{"ApiKeyHeader": []}, {"BearerToken": []}, {"ApiKeysHeader": []}]
                assert "401" in operation["responses"]


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"},
                                     {"Authorization": f"Basic {API_KEY}"}])
def test_a_missing_or_wrong_key_is_the_declared_401(client, headers):
    schema = client.app.openapi()
    error_body = _validator(schema, schema["paths"]["/rollout"]["post"]["responses"]["401"])
    for method, path in (("get", "/info"), ("get", "/task_info?seed=0"), ("post", "/rollout")):
        response = client.request(method, path, headers=headers, json={"run_id": "r"})
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        error_body.validate(response.json())


def test_the_key_is_accepted_as_either_declared_scheme(client):
    for headers in ({"X-API-Key": API_KEY}, {"Authorization": f"Bearer {API_KEY}"}):
        assert client.get("/info", headers=headers).status_code == 200


def test_a_keyless_app_declares_no_security(tmp_path):
    schema = create_app("loan", store=tmp_path / "t.db").openapi()
    assert "securitySchemes" not in schema.get("components", {})
    assert all("security" not in op and "401" not in op["responses"]
               for operations in schema["paths"].values() for op in operations.values())


def test_every_route_declares_the_error_statuses_with_one_body(client):
    for path, operations in client.app.openapi()["paths"].items():
        for operation in operations.values():
            for status in ("400", "404", "408", "413", "422", "500", "503"):
                declared = operation["responses"][status]["content"]["application/json"]["schema"]
                want = "HealthResponse" if (path, status) == ("/health", "503") else "ErrorResponse"
                assert declared == {"$ref": f"#/components/schemas/{want}"}, (path, status)


def _validator(document, schema):
    """A validator of a body ``schema`` whose ``$ref`` point into ``document`` (OpenAPI 3.1: JSON Schema 2020-12)."""
    return jsonschema.Draft202012Validator({**schema["content"]["application/json"]["schema"],
                                            "components": document["components"]})


def _request_validator(document):
    body = document["paths"]["/rollout"]["post"]["requestBody"]
    return _validator(document, body)


def _reference_request(**changes):
    body = {"run_id": "r1", "mode": "rl", "env": {"seed": 3},
            "policy": {"policy_name": "openai", "config": {"model": "Qwen/Qwen3-0.6B",
                                                           "inference_url": "http://127.0.0.1:8001/v1?cid=trace_42",
                                                           "temperature": 0.7, "max_tokens": 512}},
            "max_turns": 10, "record": {"return_trace": True, "trace_format": "compact"}, "safety": {"max_time_s": 300}}
    body.update(changes)
    return body


def test_the_default_apps_schema_takes_the_readmes_request(client):
    assert _request_validator(client.app.openapi()).is_valid(_reference_request())


@pytest.mark.parametrize("changes", [
    {"env": {"seed": 251129.0}},  # a JSON Schema integer: the app takes it too
    {"env": {"seed": 3, "config": {"split": "train", "index": 3.0}}},  # so is a split's index
    {"mode": "eval", "policy": {"policy_name": "scripted", "config": {"actions": [], "inference_url": ""}}},
    {"mode": "eval", "policy": {"policy_name": "oracle"}},
    {"trace_correlation_id": "trace_42"},
    # The reference's policy-config keys, for a policy that calls a model and for those that do not.
    {"policy": {"policy_name": "openai", "config": {"model": "m", "inference_url": "http://h/v1?cid=t",
                                                    "provider": "groq", "max_llm_calls": 3}}},
    {"mode": "eval", "policy": {"policy_name": "oracle", "config": {"model": "m", "provider": "openai",
                                                                    "max_llm_calls": 2.0}}},
    {"mode": "eval", "policy": {"policy_name": "scripted", "config": {"actions": [], "provider": "vllm",
                                                                      "max_llm_calls": None, "model": None}}},
])
def test_the_schema_and_the_app_both_accept(client, changes):
    body = _reference_request(**changes)
    assert _request_validator(client.app.openapi()).is_valid(body)
    if body["policy"]["policy_name"] == "openai":  # accepted alike by the oracle, which calls no model
        url = body["policy"]["config"]["inference_url"]
        body["policy"] = {"policy_name": "oracle", "config": {"inference_url": url}}
    assert client.post("/rollout", json=body, headers={"X-API-Key": API_KEY}).status_code == 200


@pytest.mark.parametrize("changes", [
    {"env": {"seed": 3.5}}, {"env": {"seed": "3"}}, {"env": {"config": {"seed_offset": 7}}},
    {"env": {"env_name": "loan"}}, {"mode": "rl", "policy": {"policy_name": "oracle"}},
    {"policy": {"policy_name": "hf", "config": {"model": "/etc"}}},
    {"policy": {"policy_name": "scripted", "config": {"actions": [], "temperature": 0.5}}},
    {"policy": {"policy_name": "scripted", "config": {"actions": [], "inference_url": "ftp://h/v1"}}},
    {"policy": {"policy_name": "openai", "config": {"model": "m", "inference_url": ""}}},
    {"policy": {"policy_name": "openai", "config": {"model": "m", "inference_url": "http://h/v1",
                                                    "api_key_env": "ENVIRONMENT_API_KEY"}}},
    {"policy": {"policy_name": "oracle", "config": {"env_name": "loan"}}},
    {"ops": ["env"]}, {"record": {"logprobs": 0}}, {"run_id": "a\x00b"},
    *({"policy": {"policy_name": name, "config": {**config, key: value}}}
      for name, config in (("oracle", {}), ("openai", {"model": "m", "inference_url": "http://h/v1"}))
      for key, value in (("provider", ""), ("provider", "p" * 65), ("provider", "has space"), ("provider", 7),
                         ("max_llm_calls", 0), ("max_llm_calls", "3"), ("max_llm_calls", 1.5),
                         ("max_llm_calls", True), ("max_llm_calls", 100_001))),
])
def test_the_schema_and_the_app_both_refuse(client, changes):
    body = _reference_request(**{"mode": "eval", **changes})
    assert not _request_validator(client.app.openapi()).is_valid(body)
    response = client.post("/rollout", json=body, headers={"X-API-Key": API_KEY})
    assert response.status_code in (404, 422), response.text


def test_the_env_config_an_app_was_given_may_be_repeated_not_changed(tmp_path):
    app = create_app("grant_eligibility", api_key=API_KEY, store=tmp_path / "t.db", env_config={"chat": True},
                     env_overrides=["seed_offset"])
    config = app.openapi()["components"]["schemas"]["EnvSpec"]["properties"]["config"]
    assert config["properties"]["chat"]["const"] is True and config["additionalProperties"] is False
    assert "seed_offset" in config["properties"]
    validator = jsonschema.Draft202012Validator(config)
    assert validator.is_valid({"chat": True, "seed_offset": 4}) and not validator.is_valid({"chat": 1})


def test_the_policies_published_are_the_ones_the_app_accepts(tmp_path):
    schema = create_app("loan", store=tmp_path / "t.db", policies=["scripted"]).openapi()
    variants = schema["components"]["schemas"]["PolicySpec"]["anyOf"]
    assert [variant["properties"]["policy_name"]["const"] for variant in variants] == ["scripted"]
    # The default policy (openai) is not accepted, so a request must name one.
    assert "policy" in schema["components"]["schemas"]["RolloutRequest"]["required"]
