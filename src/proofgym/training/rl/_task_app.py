"""The task app the trainer rolls out on: ``local:ENV`` started here as ``proofgym serve ENV`` (and restarted when
it dies), or a URL; rollouts over HTTP with a correlation id each, retried with backoff when the app is away."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from proofgym.core import bounded_json
from proofgym.traces import SessionTrace

_RETRIES = 6


class RLError(RuntimeError):
    """The run cannot go on (the message says why and what to change)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalTaskApp:
    """``proofgym serve ENV`` in a child process on a loopback port, its traces in ``traces``."""

    def __init__(self, env_name: str, *, env_config: Mapping[str, Any], traces: Path, log: Path) -> None:
        self.env_name, self.env_config, self.traces, self.log = env_name, dict(env_config), traces, log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._lock = threading.Lock()  # rollouts failing together restart the app once

    def start(self, timeout_s: float = 120.0) -> LocalTaskApp:
        command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve", self.env_name,
                   "--port", str(self.port), "--traces", str(self.traces), "--log-level", "warning"]
        if self.env_config:
            command += ["--env-config", json.dumps(self.env_config)]
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY")}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                            start_new_session=True)
        self._wait(timeout_s)
        return self

    def _wait(self, timeout_s: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RLError(f"services.task_url local:{self.env_name}: proofgym serve exited with "
                              f"{self.process.returncode} (see {self.log})")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RLError(f"services.task_url local:{self.env_name}: no answer on {self.url}/health within "
                      f"{timeout_s:.0f} s (see {self.log})")

    def ensure_running(self) -> bool:
        """Restart the app if its process died; whether it did."""
        with self._lock:
            if self.process is not None and self.process.poll() is None:
                return False
            self.restarts += 1
            self.start()
            return True

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Rollout:
    """One rollout's end: its ``trace`` (resolved by ``cid``) or the ``error`` that made it invalid."""

    seed: int
    cid: str
    trace: SessionTrace | None = None
    error: str | None = None
    attempts: int = 1
    seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.trace is not None and self.error is None


class RolloutClient:
    """Runs rollouts on a task app concurrently (at most ``concurrency`` at once), each with its own cid in the
    policy's ``inference_url``. A refused connection or a 5xx is retried with exponential backoff (a local app is
    restarted first if it died); a 4xx, a trace that cannot be resolved by its cid, or an aborted rollout is an
    invalid rollout, never a zero."""

    def __init__(self, url: str, *, concurrency: int, timeout_s: float, app: LocalTaskApp | None = None,
                 api_key: str | None = None, backoff_s: float = 0.5) -> None:
        import httpx

        self.url = url.rstrip("/")
        self.app = app
        self.backoff_s = backoff_s
        self._semaphore = asyncio.Semaphore(concurrency)
        headers = {} if api_key is None else {"X-API-Key": api_key}
        self._client = httpx.AsyncClient(base_url=self.url, headers=headers,
                                         timeout=httpx.Timeout(30.0, read=timeout_s))
        self._errors = httpx.HTTPError
        self.retries = 0

    async def aclose(self) -> None:
        await self._client.aclose()

    async def rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> Rollout:
        async with self._semaphore:
            started = time.monotonic()
            result = await self._rollout(body, seed, cid)
            result.seconds = time.monotonic() - started
            return result

    async def _rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> Rollout:
        error = "no attempt"
        for attempt in range(1, _RETRIES + 1):
            try:
                response = await self._client.post("/rollout", json=dict(body))
            except self._errors as exc:
                error = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 500:
                    return _read(response, seed, cid, attempt)
                error = f"HTTP {response.status_code}: {response.text[:300]}"
            self.retries += 1
            if self.app is not None:
                await asyncio.to_thread(self.app.ensure_running)
            await asyncio.sleep(min(self.backoff_s * 2 ** (attempt - 1), 8.0))
        return Rollout(seed, cid, error=f"the task app failed {_RETRIES} times: {error}", attempts=_RETRIES)


def _read(response: Any, seed: int, cid: str, attempt: int) -> Rollout:
    if response.status_code != 200:
        return Rollout(seed, cid, error=f"HTTP {response.status_code}: {response.text[:300]}", attempts=attempt)
    try:
        data = bounded_json(response.json())
        trace = data.get("trace")
        if not isinstance(trace, Mapping) or "steps" not in trace:
            return Rollout(seed, cid, error="the response has no full trace (record.trace_format full)",
                           attempts=attempt)
        session = SessionTrace.from_dict({k: v for k, v in trace.items() if k != "session_trace"})
    except (ValueError, KeyError, TypeError) as exc:
        return Rollout(seed, cid, error=f"the task app's answer is not a rollout response: {exc}", attempts=attempt)
    if session.correlation_id != cid:
        return Rollout(seed, cid, error=f"the trace's correlation id {session.correlation_id!r} is not {cid!r}",
                       attempts=attempt)
    if session.status != "ok" or data.get("aborted"):
        return Rollout(seed, cid, trace=session, error=f"rollout {session.status}: {session.error}",
                       attempts=attempt)
    return Rollout(seed, cid, trace=session, attempts=attempt)


def new_cid() -> str:
    return f"trace_{uuid.uuid4().hex}"
