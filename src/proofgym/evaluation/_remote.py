"""Rolling out on a remote task app: ``GET /info`` once, then ``POST /rollout`` per seed."""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from proofgym.core import bounded_json, redact_url
from proofgym.evaluation._config import EvalSection
from proofgym.evaluation._errors import EvalError
from proofgym.evaluation._report import SeedResult, achievements_of
from proofgym.rollouts import invalid_reason
from proofgym.traces import SessionTrace

# The variables a task app reads its key from (proofgym.serve's), in the same order.
_KEY_VARIABLES = ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY")
_DETAIL_CHARS = 500


def task_app_key(section: EvalSection) -> str | None:
    """The key to send: ``$api_key_env`` when set (an error if that variable is empty), else the first of
    ``ENVIRONMENT_API_KEY``, ``PROOFGYM_API_KEY``, ``ENV_API_KEY``, else ``None``."""
    if section.api_key_env is not None:
        value = os.environ.get(section.api_key_env, "").strip()
        if not value:
            raise EvalError(f"eval.api_key_env: the environment variable {section.api_key_env!r} is not set")
        return value
    for name in _KEY_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


class TaskAppClient:
    """An async client of one task app (``async with``); ``info()`` checks it, ``rollout()`` runs a seed."""

    def __init__(self, section: EvalSection) -> None:
        import httpx

        assert section.task_app_url is not None
        self.section = section
        self.url = section.task_app_url.rstrip("/")
        self.shown_url = redact_url(self.url)  # what messages say: never a credential the URL carries
        key = task_app_key(section)
        read = None if section.max_time_s is None else section.max_time_s + 60.0
        self._client = httpx.AsyncClient(
            base_url=self.url, headers={} if key is None else {"X-API-Key": key},
            timeout=httpx.Timeout(30.0, read=read, pool=None),
            limits=httpx.Limits(max_connections=section.concurrency, max_keepalive_connections=section.concurrency))
        self._errors = httpx.HTTPError

    async def __aenter__(self) -> TaskAppClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def info(self) -> dict[str, Any]:
        """``GET /info``; raises :class:`EvalError` when the app is unreachable or refuses the key."""
        try:
            response = await self._client.get("/info")
        except self._errors as exc:
            raise EvalError(f"eval.task_app_url: cannot reach the task app at {self.shown_url}: {exc}") from None
        if response.status_code == 401:
            raise EvalError(f"the task app at {self.shown_url} refused the API key (401): set ENVIRONMENT_API_KEY, or "
                            "name the variable holding it in eval.api_key_env")
        if response.status_code != 200:
            raise EvalError(f"the task app at {self.shown_url} answered GET /info with {response.status_code}: "
                            f"{response.text[:_DETAIL_CHARS]}")
        return response.json()

    async def rollout(self, body: Mapping[str, Any], seed: int) -> tuple[SeedResult, SessionTrace | None]:
        """Run one rollout; a refused request or a lost connection is a ``failed`` result, never an exception."""
        started = time.monotonic()
        try:
            response = await self._client.post("/rollout", json=dict(body))
        except self._errors as exc:
            return SeedResult(seed, "failed", duration_s=time.monotonic() - started,
                              error=f"{type(exc).__name__}: {exc}"), None
        elapsed = time.monotonic() - started
        if response.status_code != 200:
            return SeedResult(seed, "failed", duration_s=elapsed,
                              error=f"HTTP {response.status_code}: {_detail(response)}"), None
        try:
            # A remote app is outside our control: its answer is held to the one rule for untrusted data.
            return _read_response(bounded_json(response.json()), seed, elapsed)
        except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
            return SeedResult(seed, "failed", duration_s=elapsed,
                              error=f"the task app's answer is not a rollout response: {exc}"), None


def rollout_request(section: EvalSection, env_name: str, seed: int, run_id: str,
                    policy_config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST /rollout`` body for ``seed``."""
    env: dict[str, Any] = {"env_name": env_name, "seed": seed}
    if section.env_config:
        env["config"] = dict(section.env_config)
    body: dict[str, Any] = {
        "run_id": run_id,
        "env": env,
        "policy": {"policy_name": section.resolved_policy_name, "config": dict(policy_config)},
        "record": {"return_trace": section.return_trace, "trace_format": section.trace_format},
        "mode": "eval",
    }
    if section.turn_limit is not None:
        body["max_turns"] = section.turn_limit
    if section.max_time_s is not None:
        body["safety"] = {"max_time_s": section.max_time_s}
    return body


def _read_response(data: Mapping[str, Any], seed: int, elapsed: float) -> tuple[SeedResult, SessionTrace | None]:
    metrics = data["metrics"]
    metadata = data.get("pipeline_metadata") or {}
    trace = data.get("trace")
    session = None
    if isinstance(trace, Mapping) and "steps" in trace:
        # A full trace: proofgym's session, and beside it (a task app of proofgym serve) the same session in the
        # reference's v3 shape as ``session_trace``, dropped here; an older app's trace has no such key.
        session = SessionTrace.from_dict({key: value for key, value in trace.items() if key != "session_trace"})
    tokens = None
    if session is not None:
        tokens = sum((call.prompt_tokens or 0) + (call.completion_tokens or 0)
                     for step in session.steps for call in step.lm_calls)
    elif isinstance(trace, Mapping) and "prompt_tokens" in trace:
        tokens = int(trace["prompt_tokens"] or 0) + int(trace["completion_tokens"] or 0)
    result = SeedResult(
        seed=seed,
        status=str(data.get("status") or ("error" if data.get("aborted") else "ok")),
        total_return=float(metrics["mean_return"]),
        outcome_score=None if metrics.get("outcome_score") is None else float(metrics["outcome_score"]),
        num_steps=int(metrics["num_steps"]),
        tokens=tokens,
        duration_s=elapsed,
        session_id=metadata.get("session_id"),
        task_id=metadata.get("task_id"),
        error=None if data.get("error") is None else str(data["error"]),
        invalid_reason=_invalid_reason(metrics, session),
        achievements=achievements_of(_last_info(data, session)),
    )
    return result, session


def _last_info(data: Mapping[str, Any], session: SessionTrace | None) -> Any:
    """The last step's ``info``: the full trace's, else the response's trajectory's (a compact trace has none)."""
    if session is not None and session.steps:
        return dict(session.steps[-1].info)
    trajectories = data.get("trajectories")
    steps = trajectories[0].get("steps") if isinstance(trajectories, list) and trajectories and \
        isinstance(trajectories[0], Mapping) else None
    return steps[-1].get("info") if isinstance(steps, list) and steps and isinstance(steps[-1], Mapping) else None


def _invalid_reason(metrics: Mapping[str, Any], session: SessionTrace | None) -> str | None:
    """Why the app's environment could not judge the rollout: the app's word, else the full trace's."""
    reason = metrics.get("invalid_reason")
    if reason is not None:
        return str(reason)
    return None if session is None else invalid_reason(session)


def _detail(response: Any) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    return str(detail if detail is not None else response.text)[:_DETAIL_CHARS]
