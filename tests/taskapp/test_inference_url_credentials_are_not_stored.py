"""A rollout's inference_url is recorded in its trace through redact_url: credentials never reach the store."""

import json

from ._support import rollout_body


def test_a_password_and_a_credential_parameter_in_the_inference_url_are_not_stored(make_client, stored):
    url = "http://user:hunter2@127.0.0.1:9/v1/chat/completions?cid=trace_z&api_key=sekrit"
    body = rollout_body(3, policy_config={"inference_url": url}, mode="rl",
                        record={"return_trace": True, "trace_format": "full"})
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 200, response.text
    [session] = stored().find_by_correlation_id("trace_z")  # the cid still correlates
    text = json.dumps(session.to_dict(), default=str)
    assert "hunter2" not in text and "sekrit" not in text
    assert "http://***@127.0.0.1:9/v1/chat/completions?cid=trace_z&api_key=***" in text
