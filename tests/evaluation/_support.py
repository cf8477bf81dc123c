"""Shared by the eval tests: eval files written on the fly, and a real task app served from a thread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _threaded_server import ThreadedServer

from proofgym.taskapp import create_app


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)


def write_eval_toml(path: Path, eval_keys: dict[str, Any], env_config: dict[str, Any] | None = None,
                    policy_config: dict[str, Any] | None = None) -> Path:
    """An eval file with ``[evaluation]`` and, when given, ``[evaluation.env_config]`` /
    ``[evaluation.policy_config]``."""
    lines = ["[evaluation]", *(f"{key} = {toml_value(value)}" for key, value in eval_keys.items())]
    for table, values in (("env_config", env_config), ("policy_config", policy_config)):
        if values is not None:
            lines += ["", f"[evaluation.{table}]", *(f"{key} = {toml_value(value)}" for key, value in values.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


class ThreadedTaskApp(ThreadedServer):
    """``create_app(...)`` under uvicorn on a free loopback port, in a thread (``with`` starts and stops it)."""

    def __init__(self, env_name: str, **kwargs: Any) -> None:
        self.app = create_app(env_name, **kwargs)
        super().__init__(self.app, what="the task app", lifespan="on", start_timeout_s=30, stop_timeout_s=30)
