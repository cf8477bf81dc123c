"""Shared by the task-app tests: a scripted, slow OpenAI-compatible model server, and the real task app
started as a subprocess (``proofgym serve``) on a free loopback port."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import httpx
from _threaded_server import ThreadedServer
from fastapi import FastAPI, Request

AND_GATE = "module TopModule(input a, input b, output out);\n  assign out = a & b;\nendmodule\n"
WRONG_AND_GATE = "module TopModule(input a, input b, output out);\n  assign out = a | b;\nendmodule\n"


def write_file(content: str, path: str = "top.v") -> dict[str, Any]:
    return {"tool": "write_file", "args": {"path": path, "content": content}}


SUBMIT = {"tool": "submit", "args": {}}


class ScriptedModelServer:
    """An OpenAI-compatible chat server on loopback (uvicorn in a thread) that plays a fixed script.

    Turn ``t`` of a conversation (counted from the assistant messages it holds) is answered with
    ``actions[t - 1]`` as JSON text, after ``delay_s``. Every request's query string is kept, so a
    test can see that the policy called the inference URL with the trainer's ``cid``, and its body.
    """

    def __init__(self, actions: Sequence[Any], *, delay_s: float = 0.0) -> None:
        self.actions = list(actions)
        self.delay_s = delay_s
        self.queries: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        app = FastAPI()

        @app.post("/{path:path}")
        async def chat(path: str, request: Request) -> dict[str, Any]:
            body = await request.json()
            self.queries.append(request.url.query)
            self.bodies.append(body)
            turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            action = self.actions[min(turn, len(self.actions) - 1)]
            return {"id": f"chatcmpl-{turn}", "object": "chat.completion", "model": body.get("model", "m"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": json.dumps(action)}}],
                    "usage": {"prompt_tokens": 100 + turn, "completion_tokens": 20, "total_tokens": 120 + turn}}

        self._served = ThreadedServer(app, what="the model server", lifespan="off", timeout_graceful_shutdown=0.2)
        self.url = self._served.url + "/v1"

    def __enter__(self) -> ScriptedModelServer:
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()


class TaskAppProcess:
    """``proofgym serve ENV ...`` in a subprocess; ``url`` once it listens (it binds port 0)."""

    def __init__(self, env_name: str, *args: str, traces: Path, api_key: str | None = "test-key",
                 env: dict[str, str] | None = None) -> None:
        self.traces = traces
        self.api_key = api_key
        environ = {k: v for k, v in os.environ.items()
                   if k not in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY")}
        if api_key is not None:
            environ["ENVIRONMENT_API_KEY"] = api_key
        environ.update(env or {})
        command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve", env_name,
                   "--port", "0", "--traces", str(traces), *args]
        self.process = subprocess.Popen(command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        self.log: list[str] = []
        self.url = self._wait_for_port()
        self._reader = threading.Thread(target=self._drain_output, daemon=True)
        self._reader.start()
        self._wait_until_healthy()

    def _wait_for_port(self, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.log.append(line)
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
            if found:
                return found.group(1)
        self.process.kill()
        raise AssertionError("the task app did not start:\n" + "".join(self.log))

    def _wait_until_healthy(self, timeout_s: float = 60.0) -> None:
        # With several workers the port is bound (and logged) before the workers listen.
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.process.kill()
        raise AssertionError("the task app never became healthy:\n" + "".join(self.log))

    def _drain_output(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.append(line)

    @property
    def headers(self) -> dict[str, str]:
        return {} if self.api_key is None else {"X-API-Key": self.api_key}

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=60, **kwargs)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=60, **kwargs)

    def terminate(self, timeout_s: float = 30.0) -> int:
        """SIGTERM (a graceful drain) and wait; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout_s)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)

    def __enter__(self) -> TaskAppProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            try:
                self.terminate()
            except subprocess.TimeoutExpired:
                self.kill()


def rollout_body(seed: int = 0, *, policy_name: str = "oracle", policy_config: dict[str, Any] | None = None,
                 run_id: str = "run-1", **extra: Any) -> dict[str, Any]:
    """A minimal valid ``POST /rollout`` body."""
    return {"run_id": run_id, "env": {"seed": seed},
            "policy": {"policy_name": policy_name, "config": dict(policy_config or {})}, **extra}


def only_environment_api_key(monkeypatch, key: str) -> None:
    """The task app's key in ENVIRONMENT_API_KEY only: its other names (which the app reads first) unset."""
    for name in ("PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", key)
