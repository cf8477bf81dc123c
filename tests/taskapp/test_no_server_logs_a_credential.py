"""No server proofgym runs writes a credential a request carried into its log, nor echoes one in a response.

Each server is a real uvicorn at trace level with its access log on, so that every request line and every ASGI
scope (the query string as bytes) is written: the task app (and the policy's own calls, which httpx logs), the
viewer (``serve_view`` in a process of its own, reading its stderr) and ``serve-model``. Each is sent every
credential-looking query parameter; the reward server's test is in tests/integrations.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from _threaded_server import ThreadedServer

from proofgym.taskapp import create_app
from proofgym.traces import TraceStore

from ._support import ScriptedModelServer, rollout_body

SECRET = "S3cr3t-in-the-url"
KEY = "the-apps-key"
CREDENTIALS = "&".join(f"{name}={SECRET}" for name in (
    "api_key", "token", "key", "access_token", "sig", "password", "X-API-Key", "client_secret", "auth", "apiKey"))
ANSWER = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]
# Every logger a server or an HTTP client writes request lines to; uvicorn's do not propagate to the root.
LOGGERS = ("", "uvicorn", "uvicorn.access", "uvicorn.error", "uvicorn.asgi", "httpx")


class _Capture(logging.Handler):
    """Every record, formatted as a handler writes it (message, arguments and traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)  # uvicorn's trace level is below DEBUG
        self.setFormatter(logging.Formatter("%(name)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _capturing() -> tuple[_Capture, list[logging.Logger]]:
    # Added once the server runs: uvicorn's logging config replaces its loggers' handlers when it starts.
    capture = _Capture()
    loggers = [logging.getLogger(name) for name in LOGGERS]
    for logger in loggers:
        logger.addHandler(capture)
    logging.getLogger("httpx").setLevel(logging.INFO)  # the request lines of the policy's model calls
    return capture, loggers


def _release(capture: _Capture, loggers: list[logging.Logger]) -> None:
    for logger in loggers:
        logger.removeHandler(capture)
    logging.getLogger("httpx").setLevel(logging.NOTSET)


def test_the_task_app_logs_and_echoes_no_credential_from_any_url(tmp_path):
    app = create_app("grant_eligibility", api_key=KEY, store=tmp_path / "traces.db")
    with ScriptedModelServer(ANSWER) as model, \
            ThreadedServer(app, what="the task app", log_level="trace", access_log=True) as served:
        capture, loggers = _capturing()
        try:
            inference_url = model.url.replace("http://", f"http://user:{SECRET}@") + f"?cid=trace_log&{CREDENTIALS}"
            body = rollout_body(policy_name="openai", policy_config={"model": "m", "inference_url": inference_url,
                                                                     "max_retries": 0})
            with httpx.Client(base_url=served.url, timeout=60) as client:
                answers = [client.get(f"/health?{CREDENTIALS}"),
                           client.get(f"/info?{CREDENTIALS}"),  # no key: 401
                           client.get(f"/task_info?seed=0&{CREDENTIALS}", headers={"X-API-Key": KEY}),
                           client.get(f"/task_info?seed=-1&{CREDENTIALS}", headers={"X-API-Key": KEY}),
                           client.post(f"/rollout?{CREDENTIALS}", json=body, headers={"X-API-Key": KEY})]
        finally:
            _release(capture, loggers)
    assert [answer.status_code for answer in answers] == [200, 401, 200, 422, 200]
    assert model.queries and SECRET in model.queries[0]  # the policy called the URL as the client wrote it
    text = "\n".join(capture.lines)
    # The lines were written (access, trace, the policy's call), with the credentials taken out.
    assert '"GET /health?api_key=***&token=***&key=***' in text and "'query_string': b'api_key=***&" in text
    assert "HTTP Request: POST http://***@127.0.0.1" in text and "cid=trace_log&api_key=***" in text
    assert SECRET not in text and all(SECRET not in answer.text for answer in answers)


def test_the_viewer_logs_no_credential_from_any_url(tmp_path):
    store = tmp_path / "traces.db"
    TraceStore(store).close()
    port = _free_port()
    environ = {name: value for name, value in os.environ.items()
               if name not in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY")}
    program = (f"from proofgym.view import serve_view; serve_view({str(store)!r}, port={port}, log_level='trace')")
    process = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=environ)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_until_listening(base, process)
        with httpx.Client(base_url=base, timeout=30) as client:
            answers = [client.get(f"/?{CREDENTIALS}"), client.get(f"/sessions?{CREDENTIALS}")]
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert "'query_string': b'api_key=***&" in output  # the scopes were written, redacted
    assert SECRET not in output and all(SECRET not in answer.text for answer in answers)


def test_serve_model_logs_and_echoes_no_credential_from_any_url():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from proofgym.model_server import GenerationBackend, create_model_app, load_model

    backend = GenerationBackend(load_model("proofgym:tiny"), batch_window_ms=0)
    try:
        app = create_model_app(backend, api_key=KEY, max_tokens_limit=4)
        with ThreadedServer(app, what="serve-model", log_level="trace", access_log=True) as served:
            capture, loggers = _capturing()
            try:
                with httpx.Client(base_url=served.url, timeout=60) as client:
                    body = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 2}
                    answers = [client.get(f"/health?{CREDENTIALS}"),
                               client.post(f"/v1/chat/completions?cid=c1&{CREDENTIALS}", json=body),  # no key
                               client.post(f"/v1/chat/completions?cid=c1&{CREDENTIALS}", json=body,
                                           headers={"Authorization": f"Bearer {KEY}"})]
            finally:
                _release(capture, loggers)
    finally:
        backend.close()
    assert [answer.status_code for answer in answers] == [200, 401, 200]
    text = "\n".join(capture.lines)
    assert '"POST /v1/chat/completions?cid=c1&api_key=***&token=***' in text
    assert SECRET not in text and all(SECRET not in answer.text for answer in answers)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_listening(base: str, process: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(base + "/", timeout=5)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"the viewer did not start:\n{process.communicate()[0]}")
