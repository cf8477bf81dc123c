"""The OpenRLHF reward server's published schema is the truth: schemathesis (positive and negative data, every
check, the API key) against ``proofgym serve-reward``'s app, and the label schema checked directly."""

from __future__ import annotations

import asyncio
import json

import httpx
import jsonschema
import pytest
from _schemathesis import API_KEY, FreshApp, schema_of
from hypothesis import HealthCheck, settings

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app, parse_label
from proofgym.reward_server._schema import LABEL, QUERY_KEY_SCHEME, reward_request_schema

# Each lifespan gets a server of its own, which owns its reward function and closes it at shutdown.
APP = FreshApp(lambda _store: create_reward_app(domain_run_config("grant_eligibility"), api_key=API_KEY))


def _published():
    reward_fn = domain_run_config("grant_eligibility").reward_function()
    try:
        return create_reward_app(reward_fn, api_key=API_KEY).app.openapi()
    finally:
        reward_fn.close()


SCHEMA = schema_of(APP, _published())


@pytest.fixture(scope="module", autouse=True)
def _directory(tmp_path_factory):
    APP.directory = tmp_path_factory.mktemp("reward")


@SCHEMA.hook
def map_case(_context, case):
    """Positive bodies obey the rules the schema can only describe: one prompt and label per query, and a label's
    JSON text (or its gold / answer, facts / source_facts pairs) consistent. JSON Schema cannot relate two arrays'
    lengths, two fields' values, or the JSON inside a string."""
    body = case.body
    if case.meta is None or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return case
    lists = [key for key in ("query", "prompts", "labels") if isinstance(body.get(key), list)]
    shortest = min(len(body[key]) for key in lists)
    for key in lists:
        body[key] = body[key][:shortest]
    for i, label in enumerate(body.get("labels") or ()):
        if isinstance(label, dict):
            for name, alias in (("gold", "answer"), ("source_facts", "facts")):
                if label.get(name) is not None and label.get(alias) is not None:
                    label[alias] = label[name]
        try:
            parse_label(label, i)
        except ValueError:  # JSON text that is not a label object's
            body["labels"][i] = json.dumps({"gold": "permit"})
    return case


@SCHEMA.parametrize()
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_reward_server_matches_its_schema(case):
    case.call_and_validate()  # every check, positive and negative data, with the key (see _schemathesis)


def _post(app, path, **kwargs):
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.request("POST" if path.startswith("/get_reward") else "GET", path, **kwargs)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def reward_app():
    fn = domain_run_config("grant_eligibility").reward_function()
    yield create_reward_app(fn, api_key=API_KEY)
    fn.close()


def test_get_reward_is_published_with_the_key_schemes(reward_app):
    schema = _post(reward_app, "/openapi.json", headers={"X-API-Key": API_KEY}).json()
    assert schema == reward_app.app.openapi()
    operation = schema["paths"]["/get_reward"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RewardRequest"}
    assert operation["security"] == [{"ApiKeyHeader": []}, {"BearerToken": []}, {"ApiKeyQuery": []}]
    assert schema["components"]["securitySchemes"]["ApiKeyQuery"] == {
        **QUERY_KEY_SCHEME["ApiKeyQuery"], "type": "apiKey", "in": "query", "name": "key"}
    assert {"200", "400", "401", "413", "422", "500"} <= set(operation["responses"])
    assert "security" not in schema["paths"]["/health"]["get"]


@pytest.mark.parametrize("headers, query", [({}, ""), ({"X-API-Key": "wrong"}, ""),
                                            ({"Authorization": "Bearer wrong"}, ""), ({}, "?key=wrong")])
def test_a_missing_or_wrong_key_is_the_declared_401(reward_app, headers, query):
    reply = _post(reward_app, "/get_reward" + query, json={"query": [], "prompts": []}, headers=headers)
    assert reply.status_code == 401 and reply.headers["www-authenticate"] == "Bearer"
    assert isinstance(reply.json()["detail"], str)
    assert _post(reward_app, "/openapi.json" + query, headers=headers).status_code == 401
    assert _post(reward_app, f"/openapi.json?key={API_KEY}").status_code == 200


@pytest.mark.parametrize("label", [None, "permit", "  deny\n", json.dumps({"gold": "permit"}),
                                   {"gold": "deny", "source_facts": {"age": 40}}, {"answer": "permit", "x": 1},
                                   " {\"facts\": {}}"])
def test_labels_the_schema_accepts_parse(label):
    assert jsonschema.Draft202012Validator(LABEL).is_valid(label)
    parse_label(label, 0)


@pytest.mark.parametrize("label", ["", " \u3000\u2028", 3, [], {"gold": " "}, {"gold": 3}, {"facts": []}])
def test_labels_the_schema_refuses_do_not_parse(label):
    assert not jsonschema.Draft202012Validator(LABEL).is_valid(label)
    with pytest.raises(ValueError):
        parse_label(label, 0)


def test_lists_past_the_item_limit_are_refused_by_the_schema():
    validator = jsonschema.Draft202012Validator(reward_request_schema(2))
    assert validator.is_valid({"query": ["a", "b"], "prompts": ["", ""], "labels": None})
    assert not validator.is_valid({"query": ["a", "b", "c"], "prompts": ["", "", ""]})
    assert not validator.is_valid({"query": ["a"]})
