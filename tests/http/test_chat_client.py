"""The one OpenAI-compatible chat client (``proofgym.http.ChatClient``) against a real HTTP server on loopback: the
URL rule, the size cap, the total-time bound, the one retry policy (429 / 408 / 5xx / timeouts / lost connections
retried, Retry-After honoured, other 4xx final), what each failure is called, and no credential in an error."""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import time

import pytest
from policies._server import FakeOpenAIServer, Reply, payload

from proofgym.core import ErrorKind
from proofgym.http import MAX_RESPONSE_BYTES, NO_RETRIES, ChatClient, RetryPolicy, chat_completions_url
from _bounds import CUT_OFF_S

FAST = RetryPolicy(max_retries=2, backoff_base_s=0.01, backoff_max_s=0.02)


@pytest.fixture(scope="module")
def _fake_server():
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def server(_fake_server):
    _fake_server.script()
    yield _fake_server
    _fake_server.script()


def client_for(server, **kwargs) -> ChatClient:
    kwargs.setdefault("retry", FAST)
    return ChatClient(f"{server.base_url}/v1/chat/completions", **kwargs)


def complete(client: ChatClient, body=None):
    attempts = []

    async def main():
        try:
            return await client.complete(body or {"model": "m", "messages": []}, on_attempt=attempts.append)
        finally:
            await client.aclose()

    return asyncio.run(main()), attempts


# -- the URL ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
    ("https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions"),
    ("http://h/v1?cid=trace_abc", "http://h/v1/chat/completions?cid=trace_abc"),
    ("http://h/v1/chat/completions?cid=trace_abc&x=1", "http://h/v1/chat/completions?cid=trace_abc&x=1"),
])
def test_the_chat_completions_url_keeps_the_query(given, expected):
    assert chat_completions_url(given) == expected


@pytest.mark.parametrize("bad", ["", "localhost:8000/v1", "ftp://h/v1", "http:///v1", None])
def test_a_url_that_is_not_http_is_refused_naming_the_setting(bad):
    with pytest.raises(ValueError, match="judge_url must be an http"):
        chat_completions_url(bad, name="judge_url")


def test_a_refused_url_is_quoted_without_its_password():
    with pytest.raises(ValueError) as caught:
        chat_completions_url("ftp://user:hunter2@h/v1", name="inference_url")
    assert "hunter2" not in str(caught.value)


# -- answers and failures --------------------------------------------------------------------------------------------

def test_a_json_object_is_the_payload_and_the_key_a_bearer_header(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    answer, attempts = complete(client_for(server, api_key="sk-test-1"))
    assert answer.error is None and answer.attempts == 1 and answer.payload["choices"]
    assert attempts[0].ok and attempts[0].status == 200 and attempts[0].latency_s > 0
    [sent] = server.requests
    assert sent.headers["authorization"] == "Bearer sk-test-1"


def test_a_body_past_the_cap_is_not_read_and_is_malformed(server):
    server.script(Reply(text='{"x": "' + "y" * 5000 + '"}'))
    answer, _ = complete(client_for(server, max_response_bytes=1000))
    assert answer.last.kind is ErrorKind.MALFORMED and "larger than 1000 bytes" in answer.error
    assert answer.attempts == 1  # not retried
    assert MAX_RESPONSE_BYTES == 16 << 20


@pytest.mark.parametrize("text", ['{"choices": [', "[1, 2]", "<html>Bad gateway</html>"])
def test_a_2xx_body_that_is_not_a_json_object_is_malformed_and_final(server, text):
    server.script(Reply(text=text))
    answer, _ = complete(client_for(server))
    assert answer.last.kind is ErrorKind.MALFORMED and "not a JSON object" in answer.error and answer.attempts == 1


@pytest.mark.parametrize("status, kind", [(429, ErrorKind.RATE_LIMITED), (408, ErrorKind.TIMEOUT),
                                          (500, ErrorKind.OUTAGE), (503, ErrorKind.OUTAGE)])
def test_transient_statuses_are_retried_until_the_retries_run_out(server, status, kind):
    server.script(*[Reply({"error": {"message": "try later"}}, status=status)] * 3)
    answer, attempts = complete(client_for(server))
    assert [a.kind for a in attempts] == [kind] * 3 and answer.attempts == 3
    assert answer.error == f"HTTP {status}: try later (after 3 attempts)"


def test_retry_after_is_waited_and_capped(server):
    server.script(Reply({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0.3"}),
                  Reply(payload("openai_tool_call_compile")))
    answer, attempts = complete(client_for(server))
    assert answer.error is None and [a.status for a in attempts] == [429, 200]
    first, second = server.requests
    assert second.at - first.at >= 0.3
    assert RetryPolicy(max_retry_after_s=5.0).delay(0, 86400.0, random.Random()) == 5.0


def test_backoff_is_jittered_exponential_within_its_ceiling():
    retry, rng = RetryPolicy(backoff_base_s=0.5, backoff_max_s=8.0), random.Random(0)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (3, 4.0), (6, 8.0)]:
        assert all(ceiling / 2 <= retry.delay(attempt, None, rng) <= ceiling for _ in range(50))


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_client_errors_are_final_at_once(server, status):
    server.script(Reply({"error": {"message": "no"}}, status=status), Reply(payload("openai_tool_call_compile")))
    answer, _ = complete(client_for(server))
    assert answer.last.kind is ErrorKind.CRASH and answer.error == f"HTTP {status}: no"
    assert len(server.requests) == 1


def test_no_retries_makes_one_attempt(server):
    server.script(Reply({"error": {"message": "down"}}, status=503), Reply(payload("openai_tool_call_compile")))
    answer, _ = complete(client_for(server, retry=NO_RETRIES))
    assert answer.attempts == 1 and answer.last.retryable and len(server.requests) == 1


def test_timeout_bounds_the_whole_attempt(server):
    server.script(Reply(payload("openai_tool_call_compile"), delay_s=60))
    started = time.monotonic()
    answer, _ = complete(client_for(server, timeout_s=0.3, retry=NO_RETRIES))
    assert time.monotonic() - started < CUT_OFF_S  # the reply would take 60 s
    assert answer.last.kind is ErrorKind.TIMEOUT and answer.error == "no response within 0.3 s"


def test_a_refused_connection_is_an_outage_retried():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens once the probe closes
    answer, attempts = complete(ChatClient(f"http://127.0.0.1:{port}/v1/chat/completions", retry=FAST))
    assert len(attempts) == 3 and all(a.kind is ErrorKind.OUTAGE for a in attempts)
    assert "ConnectError" in answer.error


def test_an_error_quoting_a_credential_has_it_taken_out(server):
    echo = {"error": {"message": "cannot fetch http://user:hunter2@h/x with Authorization: Bearer sk-live-9"}}
    server.script(Reply(echo, status=400))
    answer, attempts = complete(client_for(server))
    assert "hunter2" not in answer.error and "sk-live-9" not in answer.error
    assert "hunter2" not in attempts[0].body_excerpt and "sk-live-9" not in attempts[0].body_excerpt


def test_close_from_another_thread_closes_the_client_on_its_loop(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    client = client_for(server)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        answer = asyncio.run_coroutine_threadsafe(client.complete({"model": "m", "messages": []}), loop).result(10)
        lanes = list(client._lanes)
        client.close()
        assert answer.error is None and lanes and all(lane.is_closed for lane in lanes)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


# -- connections: one per request in flight, kept alive; nothing made again per request ------------------------------

class _CountingServer:
    """A stdlib HTTP/1.1 server on loopback answering every POST with a completion, once ``parties`` requests are
    in it together (a barrier: the requests were in flight at once); it records the connection of each request."""

    def __init__(self, parties: int = 1) -> None:
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.connections: list[int] = []
        barrier = threading.Barrier(parties, timeout=20)
        body = json.dumps(payload("openai_tool_call_compile")).encode()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                owner.connections.append(self.client_address[1])
                barrier.wait()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1/chat/completions"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> _CountingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_requests_in_flight_each_hold_a_connection_kept_alive_for_the_next():
    async def rounds(client: ChatClient, width: int, count: int) -> list:
        try:
            return [await asyncio.gather(*(client.send({"model": "m", "messages": []}) for _ in range(width)))
                    for _ in range(count)]
        finally:
            await client.aclose()

    with _CountingServer(parties=4) as server:
        answers = asyncio.run(rounds(ChatClient(server.url, retry=NO_RETRIES), 4, 3))
    assert all(a.ok for round_ in answers for a in round_)
    assert len(server.connections) == 12 and len(set(server.connections)) == 4
    with _CountingServer() as server:
        answers = asyncio.run(rounds(ChatClient(server.url, retry=NO_RETRIES), 1, 5))
    assert all(a.ok for round_ in answers for a in round_) and len(set(server.connections)) == 1


def test_a_request_imports_nothing(monkeypatch):
    """Nothing is looked for on sys.path per request: httpcore imports sniffio at each lock it sets up, and without
    it installed (the serve extra lists it) each failed import searched the whole path again."""
    import sys

    class Recorder:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
            self.asked.append(name)
            return None

    async def main(client: ChatClient, recorder: Recorder) -> list:
        try:
            await asyncio.gather(*(client.send({"model": "m", "messages": []}) for _ in range(2)))  # imports httpx
            monkeypatch.setattr(sys, "meta_path", [recorder, *sys.meta_path])
            return await asyncio.gather(*(client.send({"model": "m", "messages": []}) for _ in range(2)))
        finally:
            await client.aclose()

    recorder = Recorder()
    with _CountingServer(parties=2) as server:
        answers = asyncio.run(main(ChatClient(server.url, retry=NO_RETRIES), recorder))
    assert all(a.ok for a in answers) and recorder.asked == []


def test_every_client_shares_one_tls_context(monkeypatch):
    """Making a TLS context reads the CA bundle (tens of ms on the client's loop): it is made once a process."""
    import httpx

    from proofgym.http._chat_client import default_tls_context

    made = []
    real = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: made.append(1) or real(*a, **k))
    default_tls_context.cache_clear()
    try:
        with _CountingServer(parties=3) as server:
            for _ in range(2):  # two clients, each on a loop of its own, three requests in flight each
                client = ChatClient(server.url, retry=NO_RETRIES)

                async def main(client: ChatClient = client) -> list:
                    try:
                        return await asyncio.gather(*(client.send({"model": "m", "messages": []}) for _ in range(3)))
                    finally:
                        await client.aclose()

                assert all(a.ok for a in asyncio.run(main()))
        assert len(made) == 1
    finally:
        default_tls_context.cache_clear()
