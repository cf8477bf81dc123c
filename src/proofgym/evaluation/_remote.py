"""Rolling out on a remote task app: ``GET /info`` once, then ``POST /rollout`` per seed."""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from proofgym.evaluation._config import EvaluationSection
from proofgym.evaluation._errors import EvalError
from proofgym.evaluation._report import SeedResult, achievements_of
from proofgym.http import TaskAppClient, TaskAppError, api_key_from_env, session_of
from proofgym.rollouts import invalid_reason
from proofgym.traces import SessionTrace


def task_app_key(section: EvaluationSection) -> str | None:
    """The key to send: ``$api_key_env`` when set (an error if that variable is empty), else the first of
    ``ENVIRONMENT_API_KEY``, ``PROOFGYM_API_KEY``, ``ENV_API_KEY``, else ``None``."""
    if section.api_key_env is not None:
        value = os.environ.get(section.api_key_env, "").strip()
        if not value:
            raise EvalError(f"evaluation.api_key_env: the environment variable {section.api_key_env!r} is not set")
        return value
    return api_key_from_env()  # the variables a task app reads its key from, in the same order


class RemoteRollouts:
    """An eval's rollouts on one task app (``async with``), through the one task-app client
    (:class:`~proofgym.http.TaskAppClient`): ``info()`` checks the app, ``rollout()`` runs a seed (tried once: a
    refused request or a lost connection is a ``failed`` result, never an exception)."""

    def __init__(self, section: EvaluationSection) -> None:
        assert section.task_app_url is not None
        self.section = section
        read = None if section.max_time_s is None else section.max_time_s + 60.0
        self._client = TaskAppClient(section.task_app_url, api_key=task_app_key(section),
                                     concurrency=section.concurrency, timeout_s=read)
        self.url = self._client.url
        self.shown_url = self._client.shown_url  # what messages say: never a credential the URL carries

    async def __aenter__(self) -> RemoteRollouts:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def info(self) -> dict[str, Any]:
        """``GET /info``; raises :class:`EvalError` when the app is unreachable or refuses the key."""
        try:
            return await self._client.info()
        except TaskAppError as exc:
            if exc.status is None:
                raise EvalError(f"evaluation.task_app_url: {exc}") from None
            if exc.status == 401:
                raise EvalError(f"{exc}: set ENVIRONMENT_API_KEY, or name the variable holding it in "
                                "evaluation.api_key_env") from None
            raise EvalError(str(exc)) from None

    async def rollout(self, body: Mapping[str, Any], seed: int) -> tuple[SeedResult, SessionTrace | None]:
        """Run one rollout; a refused request or a lost connection is a ``failed`` result, never an exception."""
        started = time.monotonic()
        answer = await self._client.post_rollout(body)
        elapsed = time.monotonic() - started
        if answer.data is None:
            return SeedResult(seed, "failed", duration_s=elapsed, error=answer.error), None
        try:
            return _read_response(answer.data, seed, elapsed)
        except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
            return SeedResult(seed, "failed", duration_s=elapsed,
                              error=f"the task app's answer is not a rollout response: {exc}"), None


def rollout_request(section: EvaluationSection, env_name: str, seed: int, run_id: str,
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
        session = session_of(trace)
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
