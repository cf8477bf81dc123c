import asyncio
import json

import pytest

from proofgym.http._guard import RequestGuard

from ._support import rollout_body

KEY = {"X-API-Key": "test-key"}


@pytest.mark.parametrize("method, path", [("GET", "/info"), ("GET", "/task_info?seed=0"), ("POST", "/rollout"),
                                          ("GET", "/openapi.json")])
def test_a_missing_key_is_401_everywhere_but_health(make_client, method, path):
    client = make_client(headers={})
    response = client.request(method, path, json=rollout_body() if method == "POST" else None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "missing API key" in response.json()["detail"]
    assert client.get("/health").status_code == 200


def test_a_wrong_key_is_401_not_400(make_client):
    client = make_client(headers={"X-API-Key": "nope"})
    response = client.post("/rollout", json=rollout_body())
    assert response.status_code == 401 and "invalid API key" in response.json()["detail"]
    assert client.get("/info", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_the_key_is_accepted_as_x_api_key_or_bearer(make_client):
    client = make_client(headers={})
    assert client.get("/info", headers={"X-API-Key": "test-key"}).status_code == 200
    assert client.get("/info", headers={"Authorization": "Bearer test-key"}).status_code == 200


def test_auth_is_checked_before_the_body_is_parsed_or_measured(make_client):
    client = make_client(headers={}, max_body_bytes=100)
    assert client.post("/rollout", content=b"{not json").status_code == 401
    assert client.post("/rollout", content=b"x" * 1000).status_code == 401


def test_the_key_defaults_to_the_environment(make_client, monkeypatch):
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "from-env")
    client = make_client(headers={}, api_key=None)
    assert client.get("/info").status_code == 401
    assert client.get("/info", headers={"X-API-Key": "from-env"}).status_code == 200


def test_without_any_key_requests_are_not_authenticated(make_client, monkeypatch):
    for name in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    client = make_client(headers={}, api_key=None)
    assert client.get("/info").json()["auth"] is False


def test_a_declared_oversized_body_is_413(make_client):
    client = make_client(max_body_bytes=2000)
    body = rollout_body(policy_name="scripted", policy_config={"actions": ["x" * 3000]})
    response = client.post("/rollout", json=body)
    assert response.status_code == 413
    assert "limit is 2000" in response.json()["detail"]


def test_a_streamed_oversized_body_is_413(make_client):
    client = make_client(max_body_bytes=2000)

    def chunks():  # no Content-Length: the body arrives in chunks
        yield b'{"run_id": "r", "policy": {"policy_name": "scripted", "config": {"actions": ["'
        for _ in range(10):
            yield b"x" * 500
        yield b'"]}}}'

    response = client.post("/rollout", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert "at least" in response.json()["detail"]


def test_a_body_within_the_limit_is_replayed_to_the_app(make_client):
    client = make_client(max_body_bytes=4000)
    body = json.dumps(rollout_body(policy_name="scripted", policy_config={"actions": ["x" * 1000]})).encode()

    def chunks():
        for start in range(0, len(body), 100):
            yield body[start:start + 100]

    response = client.post("/rollout", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.json()["trajectories"][0]["steps"][0]["tool_calls"] == [
        {"id": "call_0", "type": "function",
         "function": {"name": "answer", "arguments": json.dumps({"text": "x" * 1000})}}]


def _call_guard(headers, body_chunks, *, max_body_bytes=10):
    sent, seen = [], []

    async def app(scope, receive, send):
        message = await receive()
        seen.append(message["body"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def run():
        messages = [{"type": "http.request", "body": chunk, "more_body": i < len(body_chunks) - 1}
                    for i, chunk in enumerate(body_chunks)]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "path": "/rollout", "headers": [(k.encode(), v.encode()) for k, v in headers]}
        await RequestGuard(app, api_key=None, max_body_bytes=max_body_bytes)(scope, receive, send)

    asyncio.run(run())
    return sent[0]["status"], seen


def test_an_invalid_content_length_is_400():
    status, seen = _call_guard([("content-length", "12abc")], [b"x"])
    assert status == 400 and seen == []


@pytest.mark.parametrize("length", ["9" * 5000, "9" * 12, "00000000000000000000005"])
def test_a_content_length_of_any_number_of_digits_is_judged_without_raising(length):
    """5,000 digits made int() raise (Python's digit limit): a 500. Leading zeros are still a small length."""
    status, seen = _call_guard([("content-length", length)], [b"x" * 5])
    assert (status, seen) == ((204, [b"xxxxx"]) if length.endswith("05") else (413, []))


def test_chunks_are_joined_before_the_app_reads_them():
    status, seen = _call_guard([], [b"ab", b"cd", b"ef"])
    assert status == 204 and seen == [b"abcdef"]


def test_the_limit_counts_every_chunk():
    status, seen = _call_guard([], [b"abcdef", b"ghijk"])
    assert status == 413 and seen == []
