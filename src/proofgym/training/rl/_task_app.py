"""The task app the trainer rolls out on: ``local:ENV`` started here as ``proofgym serve ENV`` (and restarted when
it dies), or a URL; rollouts over HTTP with a correlation id each, retried with backoff when the app is away."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Mapping

from proofgym.http import API_KEY_ENV_VARS, RL_ROLLOUT_TRIES, TaskAppClient, task_app_healthy
from proofgym.http import TaskAppRollout as Rollout

__all__ = ["LocalTaskApp", "RLError", "Rollout", "RolloutClient", "new_cid"]


class RLError(RuntimeError):
    """The run cannot go on (the message says why and what to change)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
                       if key not in API_KEY_ENV_VARS}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                            start_new_session=True)
        self._wait(timeout_s)
        return self

    def _wait(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RLError(f"services.task_url local:{self.env_name}: proofgym serve exited with "
                              f"{self.process.returncode} (see {self.log})")
            if task_app_healthy(self.url, timeout_s=2.0):
                return
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


class RolloutClient(TaskAppClient):
    """The trainer's configuration of the one task-app client (:class:`~proofgym.http.TaskAppClient`): rollouts
    run concurrently (at most ``concurrency`` at once), each with its own cid in the policy's ``inference_url``. A
    refused connection or a 5xx is tried again with exponential backoff, up to :data:`~proofgym.http.RL_ROLLOUT_TRIES`
    times (a local app is restarted first if it died); a 4xx, a trace that cannot be resolved by its cid, or an
    aborted rollout is an invalid rollout, never a zero."""

    def __init__(self, url: str, *, concurrency: int, timeout_s: float, app: LocalTaskApp | None = None,
                 api_key: str | None = None, backoff_s: float = 0.5) -> None:
        super().__init__(url, api_key=api_key, concurrency=concurrency, timeout_s=timeout_s, tries=RL_ROLLOUT_TRIES,
                         backoff_s=backoff_s, on_retry=None if app is None else app.ensure_running)
        self.app = app


def new_cid() -> str:
    return f"trace_{uuid.uuid4().hex}"
