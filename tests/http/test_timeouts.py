"""Slow clients over real sockets against real uvicorn: trickled headers, trickled or short bodies are cut off
within their timeouts (408, connection closed), a normal request still works, and a worker's connections are
capped (503 beyond the cap). Both of uvicorn's HTTP parsers (httptools and h11) are checked."""

from __future__ import annotations

import asyncio
import inspect
import pickle
import socket
import time

import httpx
import pytest
from _threaded_server import ThreadedServer
from fastapi import FastAPI

from proofgym.http import RequestGuard
from proofgym.taskapp import create_app
from proofgym.http._timeouts import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    http_protocol,
    uvicorn_limits,
)

from taskapp._support import TaskAppProcess, rollout_body

KEY = "test-key"
TIMEOUT_S = 0.5
# How long past a timeout the server may take to act (a busy 2-core machine), and the most a test waits.
SLACK_S = 1.5


def _slow_app():
    """A tiny app behind the guard: /slow answers after 2 timeouts' worth (a running request is never cut off)."""
    app = FastAPI()

    @app.get("/slow")
    async def slow() -> dict:
        await asyncio.sleep(2 * TIMEOUT_S)
        return {"ok": True}

    @app.post("/echo")
    async def echo(body: dict) -> dict:
        return body

    return RequestGuard(app, api_key=None, max_body_bytes=1 << 20, body_timeout_s=TIMEOUT_S)


@pytest.fixture(params=["httptools", "h11"])
def server(request):
    config = {"http": http_protocol(TIMEOUT_S, kind=request.param), "limit_concurrency": 3, "lifespan": "off",
              "timeout_graceful_shutdown": 0.2}
    with ThreadedServer(_slow_app(), what="the slow-client app", **config) as served:
        yield served


def _connect(server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT_S + 2 * SLACK_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout fails the test)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _trickle(sock: socket.socket, data: bytes, *, every_s: float = 0.1) -> float:
    """Send ``data`` a byte every ``every_s`` until the server closes; the seconds it took to close."""
    start = time.monotonic()
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # closed by the server
            break
        time.sleep(every_s)
        if time.monotonic() - start > TIMEOUT_S + SLACK_S:
            break
    return time.monotonic() - start


def test_a_trickled_request_line_and_headers_get_408_and_the_connection_is_closed(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n")
        start = time.monotonic()
        _trickle(sock, b"X-Slow: " + b"a" * 100)
        answer = _read_until_closed(sock)
        assert time.monotonic() - start < TIMEOUT_S + SLACK_S
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'"detail": "the request headers did not arrive within 0.5 s"' in answer


def test_a_connection_that_sends_nothing_is_closed(server):
    with _connect(server) as sock:
        start = time.monotonic()
        assert _read_until_closed(sock) == b""  # nothing begun, nothing to answer
        assert TIMEOUT_S - 0.1 < time.monotonic() - start < TIMEOUT_S + SLACK_S


@pytest.mark.parametrize("sent", ["trickled", "short"])
def test_a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_is_closed(server, sent):
    with _connect(server) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"a\": \"")
        start = time.monotonic()
        if sent == "trickled":
            _trickle(sock, b"b" * 100)
        answer = _read_until_closed(sock)  # "short": 7 of the 100 bytes declared, then silence
        assert time.monotonic() - start < TIMEOUT_S + SLACK_S
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in answer.lower()
    assert b"the request body did not arrive within 0.5 s" in answer


def test_normal_requests_work_and_a_running_one_is_not_cut_off(server):
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.get("/slow").json() == {"ok": True}  # longer than the header timeout, once headers are in
        assert client.post("/echo", json={"a": 1}).json() == {"a": 1}  # the same keep-alive connection
        time.sleep(TIMEOUT_S / 2)
        assert client.post("/echo", json={"b": 2}).json() == {"b": 2}


def test_a_connection_past_the_cap_gets_503(server):
    # limit_concurrency=3 is a cap of 2 connections (uvicorn counts the new one): the third is refused.
    with _connect(server) as first, _connect(server) as second:
        time.sleep(0.1)
        with _connect(server) as third:
            third.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = _read_until_closed(third)
        assert answer.startswith(b"HTTP/1.1 503 ")
        first.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        assert _read_until_closed(first).startswith(b"HTTP/1.1 200 ")
        del second


def test_the_connection_cap_is_the_number_given():
    assert uvicorn_limits(header_timeout_s=1.0, max_connections=2)["limit_concurrency"] == 3
    with pytest.raises(ValueError):
        uvicorn_limits(header_timeout_s=1.0, max_connections=0)
    with pytest.raises(ValueError):
        http_protocol(0)


def test_the_task_app_cuts_off_a_short_body_and_still_runs_rollouts(tmp_path):
    app = create_app("grant_eligibility", api_key=KEY, store=tmp_path / "t.db", body_timeout_s=TIMEOUT_S)
    config = {**uvicorn_limits(header_timeout_s=TIMEOUT_S, max_connections=8), "timeout_graceful_shutdown": 0.2}
    with ThreadedServer(app, what="the task app", **config) as served:
        with _connect(served) as sock:
            sock.sendall(b"POST /rollout HTTP/1.1\r\nHost: x\r\nX-API-Key: " + KEY.encode() +
                         b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"run_id\": ")
            assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
        reply = httpx.post(served.url + "/rollout", json=rollout_body(), headers={"X-API-Key": KEY}, timeout=30)
        assert reply.status_code == 200 and reply.json()["status"] == "ok"
        assert httpx.get(served.url + "/info", headers={"X-API-Key": KEY}).json()["limits"]["body_timeout_s"] == \
            TIMEOUT_S


def _option_defaults(command):
    return {name: parameter.default.default for name, parameter in inspect.signature(command).parameters.items()}


def test_the_defaults_are_the_documented_ones():
    from proofgym.cli._serve import serve_command
    from proofgym.cli._train import serve_reward_command
    from proofgym.reward_server import _app as reward_app

    serve_options = _option_defaults(serve_command)
    assert (serve_options["header_timeout_s"], serve_options["body_timeout_s"], serve_options["max_connections"]) \
        == (DEFAULT_HEADER_TIMEOUT_S, DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS) == (10.0, 30.0, 256)
    reward_options = _option_defaults(serve_reward_command)
    assert (reward_options["header_timeout_s"], reward_options["body_timeout_s"], reward_options["max_connections"]) \
        == (reward_app.DEFAULT_HEADER_TIMEOUT_S, reward_app.DEFAULT_BODY_TIMEOUT_S,
            reward_app.DEFAULT_MAX_CONNECTIONS) \
        == (10.0, 60.0, 1024)


def test_the_protocol_travels_to_spawned_workers():
    protocol = pickle.loads(pickle.dumps(http_protocol(2.5)))
    assert protocol.keywords == {"header_timeout_s": 2.5}


@pytest.mark.slow  # a multi-worker app (6 s); one worker's timeouts are tested above
def test_proofgym_serve_takes_the_timeouts_in_every_worker(tmp_path):
    with TaskAppProcess("loan", "--workers", "2", "--header-timeout-s", "0.5", "--body-timeout-s", "0.5",
                        "--max-connections", "4", traces=tmp_path / "t.db", api_key=KEY) as served:
        port = int(served.url.rsplit(":", 1)[1])
        for _ in range(4):  # connections spread over both workers
            with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S + 2 * SLACK_S) as sock:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
            with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S + 2 * SLACK_S) as sock:
                sock.sendall(b"POST /rollout HTTP/1.1\r\nHost: x\r\nX-API-Key: " + KEY.encode() +
                             b"\r\nContent-Length: 10\r\n\r\n{")
                assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
        with served.client() as client:
            assert client.post("/rollout", json=rollout_body()).status_code == 200
