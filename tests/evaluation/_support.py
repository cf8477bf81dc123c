"""Shared by the eval tests: eval files written on the fly, and a real task app served from a thread."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from proofgym.serve import create_app


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)


def write_eval_toml(path: Path, eval_keys: dict[str, Any], env_config: dict[str, Any] | None = None,
                    policy_config: dict[str, Any] | None = None) -> Path:
    """An eval file with ``[eval]`` and, when given, ``[eval.env_config]`` / ``[eval.policy_config]``."""
    lines = ["[eval]", *(f"{key} = {toml_value(value)}" for key, value in eval_keys.items())]
    for table, values in (("env_config", env_config), ("policy_config", policy_config)):
        if values is not None:
            lines += ["", f"[eval.{table}]", *(f"{key} = {toml_value(value)}" for key, value in values.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


class ThreadedTaskApp:
    """``create_app(...)`` under uvicorn on a free loopback port, in a thread (``with`` starts and stops it)."""

    def __init__(self, env_name: str, **kwargs: Any) -> None:
        self.app = create_app(env_name, **kwargs)
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    def __enter__(self) -> ThreadedTaskApp:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            assert time.monotonic() < deadline and self._thread.is_alive(), "the task app did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._socket.close()
