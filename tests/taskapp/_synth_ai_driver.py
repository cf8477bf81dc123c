"""Runs inside synth-ai 0.2.14's own venv (never imports proofgym): one check of a proofgym task app with the
reference's client code, its result printed as one JSON line.

``python _synth_ai_driver.py CHECK URL [ARG]``; the API key comes from ``ENVIRONMENT_API_KEY`` (and, for the
aliases check, ``ENVIRONMENT_API_KEY_ALIASES``). An exception is a failed check: the traceback goes to stderr
and the exit status is 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from typing import Any

from synth_ai.task.client import TaskAppClient
from synth_ai.task.contracts import RolloutRequest, RolloutResponse, TaskInfo
from synth_ai.task.trace_correlation_helpers import (
    extract_trace_correlation_id,
    verify_trace_correlation_id_in_response,
)
from synth_ai.task.validators import validate_rollout_response_for_rl


def client(url: str, key: str | None = None) -> TaskAppClient:
    return TaskAppClient(url, api_key=os.environ.get("ENVIRONMENT_API_KEY") if key is None else key, retries=1)


async def task_info(url: str, seeds: str) -> dict[str, Any]:
    """``TaskAppClient.task_info`` for the comma-separated ``seeds``; with none, the raw answer (the client's own
    ``task_info()`` validates the reference server's ``{"taskset": ...}`` as a TaskInfo, which it is not)."""
    async with client(url) as app:
        if not seeds:
            response = await app._request("GET", "/task_info")
            return {"raw": response.json()}
        result = await app.task_info(seeds=[int(seed) for seed in seeds.split(",")])
        infos = result if isinstance(result, list) else [result]
        return {"is_list": isinstance(result, list), "infos": [info.model_dump() for info in infos]}


async def info(url: str, _: str) -> dict[str, Any]:
    async with client(url) as app:
        data = await app.info()
    return {"task_info": TaskInfo.model_validate(data).model_dump(), "raw": data}


async def rollout(url: str, body: str) -> dict[str, Any]:
    """``TaskAppClient.rollout`` of ``body`` (a RolloutRequest as JSON), the response validated by the
    reference's contract, its RL validator and its correlation helpers, and its ``trace.session_trace`` stored
    the way ``synth-ai eval`` stores it (rebuilt by its loader, inserted into a fresh trace database)."""
    request = RolloutRequest.model_validate(json.loads(body))
    async with client(url) as app:
        # What TaskAppClient.rollout does, keeping the JSON too: its RolloutTrajectory model drops the
        # trajectory's trace_correlation_id, which its own correlation check then misses.
        data = (await app._request("POST", "/rollout", json_payload=request)).json()
    RolloutResponse.model_validate(data)
    cid = extract_trace_correlation_id(request.policy.config, request.policy.config.get("inference_url"),
                                       request.mode)
    out: dict[str, Any] = {
        "response": data,
        "rl_issues": validate_rollout_response_for_rl(data, warn_only=True),
        "cid": cid,
        "cid_everywhere": None if cid is None else verify_trace_correlation_id_in_response(data, cid, request.run_id),
    }
    trace = data.get("trace")
    if isinstance(trace, dict) and isinstance(trace.get("session_trace"), dict):
        out["stored"] = await store(trace["session_trace"])
    return out


async def store(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` stored as ``synth-ai eval`` stores a rollout's trace, then read back from the database."""
    import sqlite3

    from synth_ai.cli.task_apps import _session_trace_from_dict
    from synth_ai.tracing_v3.session_tracer import SessionTracer

    path = os.path.join(tempfile.mkdtemp(), f"{uuid.uuid4().hex}.db")
    tracer = SessionTracer(db_url=f"sqlite+aiosqlite:///{path}", auto_save=True)
    await tracer.initialize()
    trace = _session_trace_from_dict(payload)
    assert trace is not None
    await tracer.db.insert_session_trace(trace)
    await tracer.db.close()
    with sqlite3.connect(path) as db:
        return {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 - fixed names
                for table in ("session_traces", "session_timesteps", "events", "messages")}


async def aliases(url: str, keys: str) -> dict[str, Any]:
    """``GET /info`` with a wrong primary key, the right one only among the aliases ``keys`` (comma-separated,
    as ``ENVIRONMENT_API_KEY_ALIASES`` holds them)."""
    os.environ["ENVIRONMENT_API_KEY_ALIASES"] = keys
    try:
        async with client(url, key="not-the-key") as app:
            headers = app._headers()
            data = await app.info()
    finally:
        del os.environ["ENVIRONMENT_API_KEY_ALIASES"]
    return {"headers": sorted(headers), "env_name": data.get("env_name")}


CHECKS = {"task_info": task_info, "info": info, "rollout": rollout, "aliases": aliases}


async def batch(url: str, checks: str) -> list[Any]:
    """Several checks in one process (synth-ai takes seconds to import): ``[[check, argument], ...]``, each
    result or, for a check that failed, ``{"error": traceback}``."""
    import traceback

    results: list[Any] = []
    for check, argument in json.loads(checks):
        try:
            results.append(await CHECKS[check](url, argument))
        except Exception:  # noqa: BLE001 - reported to the test, which fails naming the check
            results.append({"error": traceback.format_exc()})
    return results


if __name__ == "__main__":
    check, url, argument = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else "")
    run = batch if check == "batch" else CHECKS[check]
    print(json.dumps(asyncio.run(run(url, argument)), default=str))
