"""A credential in a rollout request is used where the client sent it and written down nowhere.

The rule, for every path that takes a request's settings: a credential (a secret-named key at any depth of
``policy.config``, a URL's password or credential parameter) reaches the model server as the client wrote it,
and is ``***`` in everything the app stores or answers: the trace store (the session's metadata, each model
call's request), the response (the echoed inference URL, the full trace) and every 422, whose ``input`` never
repeats what a secret-named field held.
"""

from __future__ import annotations

import json

import pytest

from ._support import ScriptedModelServer, rollout_body

SECRETS = [f"S3cr3t-{n}" for n in range(9)]
ANSWER = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]


def _extra_body() -> dict:
    return {
        "authorization": f"Bearer {SECRETS[0]}",
        "metadata": {"nested": {"x-api-key": SECRETS[1], "headers": [["Cookie", SECRETS[2]]]}},
        "callback": f"https://user:{SECRETS[3]}@hooks.example/x?cid=c1&sig={SECRETS[4]}",
        "client_secret": SECRETS[5], "seed": 7,
    }


def test_credentials_in_the_policy_config_reach_the_model_server_and_nothing_else(make_client, stored):
    with ScriptedModelServer(ANSWER) as model:
        url = model.url.replace("http://", f"http://user:{SECRETS[6]}@") + f"?cid=trace_cred&api_key={SECRETS[7]}"
        body = rollout_body(policy_name="openai", policy_config={
            "model": "m", "inference_url": url, "max_retries": 0, "extra_body": _extra_body()},
            record={"return_trace": True, "trace_format": "full"})
        response = make_client().post("/rollout", json=body)
    assert response.status_code == 200, response.text
    # Used where the client sent it: the model server got the body's settings and the URL's parameter.
    assert model.bodies[0]["authorization"] == f"Bearer {SECRETS[0]}" and SECRETS[7] in model.queries[0]
    [session] = stored().find_by_correlation_id("trace_cred")
    stored_text = json.dumps(session.to_dict(), default=str)
    assert not [secret for secret in SECRETS if secret in stored_text]
    assert not [secret for secret in SECRETS if secret in response.text]
    [call] = session.steps[0].lm_calls
    assert call.request["authorization"] == "***" and call.request["client_secret"] == "***"
    assert call.request["metadata"] == {"nested": {"x-api-key": "***", "headers": [["Cookie", "***"]]}}
    assert call.request["callback"] == "https://***@hooks.example/x?cid=c1&sig=***" and call.request["seed"] == 7
    assert call.request["messages"] == model.bodies[0]["messages"]  # what is no credential is kept as sent
    echoed = response.json()["pipeline_metadata"]["inference_url"]
    assert echoed.startswith("http://***@127.0.0.1") and echoed.endswith("?cid=trace_cred&api_key=***")


@pytest.mark.parametrize("change, loc", [
    (lambda body: body["policy"]["config"].update(api_key=SECRETS[8]), ["body", "policy", "config", "api_key"]),
    (lambda body: body["policy"]["config"].update(extra_headers={"Authorization": f"Bearer {SECRETS[8]}"}),
     ["body", "policy", "config", "extra_headers"]),
    (lambda body: body["policy"].update(api_key=SECRETS[8]), ["body", "policy", "api_key"]),
    (lambda body: body["policy"]["config"].update(inference_url=f"http://user:{SECRETS[8]}@host/v1 x"),
     ["body", "policy", "config", "inference_url"]),
    (lambda body: body["policy"]["config"].update(temperature={"token": SECRETS[8]}),
     ["body", "policy", "config", "temperature"]),
    (lambda body: body["env"].update(config={"access_token": SECRETS[8]}), ["body", "env", "config", "access_token"]),
])
def test_a_refused_credential_is_named_by_its_path_and_never_echoed(make_client, change, loc):
    body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": "http://127.0.0.1:9/v1"})
    change(body)
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 422, response.text
    assert loc in [detail["loc"] for detail in response.json()["detail"]]
    assert SECRETS[8] not in response.text
