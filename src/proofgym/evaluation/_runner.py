"""Running an evaluation: every seed rolled out (here or on a task app), at most ``concurrency`` at once,
each result reported as it lands, every trace stored."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any, Callable

from proofgym.config import ConfigError
from proofgym.core import redact_url
from proofgym.envs import env_names, make
from proofgym.evaluation._config import ComputeSection, EvalConfig, EvaluationSection
from proofgym.evaluation._errors import EvalError
from proofgym.evaluation._judges import EvalJudge, build_judges, invalid_verdicts
from proofgym.evaluation._report import EvalReport, JudgeStats, SeedResult, achievements_of
from proofgym.traces import (DEFAULT_PATH, DuplicateSessionError, SessionTrace, TraceStore, TraceWriteError,
                              TraceWriter)

OnResult = Callable[[SeedResult], Any]


def run_eval(config: EvalConfig | EvaluationSection, *, on_result: OnResult | None = None,
             judges: list[EvalJudge] | None = None, compute: ComputeSection | None = None) -> EvalReport:
    """Run an evaluation to the end (see :func:`evaluate`)."""
    return asyncio.run(evaluate(config, on_result=on_result, judges=judges, compute=compute))


async def evaluate(config: EvalConfig | EvaluationSection, *, on_result: OnResult | None = None,
                   judges: list[EvalJudge] | None = None, compute: ComputeSection | None = None) -> EvalReport:
    """Roll out every seed of ``config`` and return the report; ``on_result(result)`` is called as each finishes.

    Then every judge (``judges``, else those the config's ``[evaluation.judge]`` / ``[[evaluation.judges]]``
    build) scores every rollout that ended ``ok`` and left a trace; the judges are closed at the end either way.

    With ``task_app_url`` the rollouts run on that task app (``POST /rollout``), otherwise here
    (``proofgym.rollouts.run_rollout``). Every session is stored in the trace store under a new
    run of kind ``eval`` whose summary is the report's; a remote app's sessions are stored when it
    returns full traces. A rollout that fails is a result with its error, never an exception;
    :class:`EvalError` is raised only when the evaluation cannot start.

    ``compute`` (default: the config's ``[compute]``) with a ``ray_address`` runs the local rollouts on that
    Ray cluster instead (:class:`~proofgym.evaluation._ray_rollouts.RayRollouts`).
    """
    section = config.evaluation if isinstance(config, EvalConfig) else config
    if compute is None and isinstance(config, EvalConfig):
        compute = config.compute
    if judges is None:
        judges = build_judges(section.judge_entries())
    try:
        return await _evaluate(section, on_result, judges, compute)
    finally:
        for judge in judges:
            await judge.aclose()


async def _evaluate(section: EvaluationSection, on_result: OnResult | None, judges: list[EvalJudge],
                    compute: ComputeSection | None = None) -> EvalReport:
    run_id = f"eval-{uuid.uuid4().hex[:12]}"
    if section.task_app_url is not None:
        from proofgym.evaluation._remote import RemoteRollouts, rollout_request

        async with RemoteRollouts(section) as client:
            info = await client.info()
            env_name = section.env_name or str(info.get("env_name"))
            if env_name != info.get("env_name"):
                raise EvalError(f"evaluation.env_name is {env_name!r} but the task app at {client.shown_url} serves "
                                f"{info.get('env_name')!r}")
            options = section.policy_options()

            async def remote(seed: int) -> tuple[SeedResult, SessionTrace | None]:
                return await client.rollout(rollout_request(section, env_name, seed, run_id, options), seed)

            return await _run(section, run_id, env_name, remote, on_result, judges)
    env_name = _check_environment(section)
    policy = _build_policy(section, env_name)
    if compute is not None and compute.ray_address is not None:
        await policy.aclose()  # built to check the policy config here; each Ray actor builds its own
        return await _run_on_ray(section, run_id, env_name, compute, on_result, judges)
    try:
        async def local(seed: int) -> tuple[SeedResult, SessionTrace | None]:
            return await _rollout_here(section, env_name, policy, seed, run_id)

        return await _run(section, run_id, env_name, local, on_result, judges)
    finally:
        await policy.aclose()


async def _run(section: EvaluationSection, run_id: str, env_name: str, rollout: Callable[[int], Any],
               on_result: OnResult | None, judges: list[EvalJudge], *, write_sessions: bool = True) -> EvalReport:
    with _open_store(section) as store:
        return await _run_seeds(section, store, run_id, env_name, rollout, on_result, judges, write_sessions)


async def _run_on_ray(section: EvaluationSection, run_id: str, env_name: str, compute: ComputeSection,
                      on_result: OnResult | None, judges: list[EvalJudge]) -> EvalReport:
    from proofgym.evaluation._ray_rollouts import RayRollouts

    try:
        rollouts = RayRollouts(section, env_name, run_id, compute)
    except (ImportError, ConnectionError) as exc:
        raise EvalError(f"compute.ray_address: {exc}") from None
    except ConfigError as exc:  # compute.runtime_env: what it names cannot be shipped
        raise EvalError(str(exc)) from None
    try:
        report = await _run(section, run_id, env_name, rollouts.rollout, on_result, judges,
                            write_sessions=not rollouts.writes_traces)
    finally:
        rollouts.close()
    report.ray_address = compute.ray_address
    return report


async def _run_seeds(section: EvaluationSection, store: TraceStore, run_id: str, env_name: str,
                     rollout: Callable[[int], Any], on_result: OnResult | None,
                     judges: list[EvalJudge], write_sessions: bool = True) -> EvalReport:
    report = EvalReport(run_id=run_id, env_name=env_name, policy_name=section.resolved_policy_name,
                        model=section.policy_options().get("model"), task_app_url=redact_url(section.task_app_url),
                        traces=store.url, app_id=section.app_id)
    # The store takes any credential out of the config (a task_app_url's password, an inference_url's api_key).
    store.start_run(run_id, kind="eval", env_name=env_name, config=section.model_dump(mode="json"))
    with store.ending_run(run_id):  # an exception or Ctrl-C anywhere below still ends the run
        slots = asyncio.Semaphore(section.concurrency)
        by_seed: dict[int, SeedResult] = {}
        sessions: dict[int, SessionTrace] = {}  # kept for the judges
        started = time.monotonic()
        with TraceWriter(store) as writer:

            async def one(seed: int) -> None:
                async with slots:
                    result, session = await rollout(seed)
                if session is not None:
                    if write_sessions:  # else the rollout stored it (each Ray node writes to a shared Postgres)
                        writer.submit(session)
                    if judges and result.ok:
                        sessions[seed] = session
                by_seed[seed] = result
                if on_result is not None:
                    on_result(result)

            try:
                await asyncio.gather(*(one(seed) for seed in section.seeds))
            finally:
                report.wall_time_s = time.monotonic() - started
                try:
                    writer.flush()
                except TraceWriteError as exc:
                    unstored = {sid for sid, error in exc.failures
                                if not _stored_by_the_app(store, sid, error, run_id)}
                    for seed, result in by_seed.items():
                        if result.session_id in unstored:
                            by_seed[seed] = replace(result, status="failed",
                                                    error=f"the trace was not stored: {exc}")
        report.results = [by_seed[seed] for seed in section.seeds if seed in by_seed]
        if judges:
            report.results, report.judges = await _judge(section, judges, report.results, sessions)
        ok = report.failed == 0 and not report.nothing_judged
        store.finish_run(run_id, status="ok" if ok else "error", summary=report.summary())
    return report


def _stored_by_the_app(store: TraceStore, session_id: str, error: BaseException, run_id: str) -> bool:
    """Whether a session the store refused as a duplicate is there already under this run: the task app writes
    to the same trace store (``proofgym serve`` and ``proofgym eval`` run from one directory both default to
    traces/proofgym.db), so it is stored, once."""
    if not isinstance(error, DuplicateSessionError):
        return False
    stored = store.get_session(session_id)
    return stored is not None and stored.run_id == run_id


async def _judge(section: EvaluationSection, judges: list[EvalJudge], results: list[SeedResult],
                 sessions: dict[int, SessionTrace]) -> tuple[list[SeedResult], list[JudgeStats]]:
    """Every judge's score of every rollout that ended ``ok`` with a trace, in each result's ``judge_scores``."""
    finished = [r for r in results if r.ok]
    judged = [r for r in finished if r.seed in sessions]
    scores: dict[int, dict[str, float | None]] = {r.seed: {} for r in finished}
    stats = []
    for judge in judges:
        if judge.scorer is None:
            stats.append(JudgeStats(judge.name, judge.score_kind, no_trace=len(finished) - len(judged),
                                    problem=judge.problem))
            continue
        found = await judge.score([sessions[r.seed] for r in judged], concurrency=section.concurrency)
        values = [judge.value(score) for score in found]
        for result, value in zip(judged, values):
            scores[result.seed][judge.name] = value
        stats.append(JudgeStats(judge.name, judge.score_kind, scored=sum(v is not None for v in values),
                                abstained=sum(v is None for v in values), no_trace=len(finished) - len(judged),
                                invalid_verdicts=sum(invalid_verdicts(score) for score in found)))
    return [replace(r, judge_scores=scores[r.seed]) if r.seed in scores else r for r in results], stats


async def _rollout_here(section: EvaluationSection, env_name: str, policy: Any, seed: int,
                        run_id: str) -> tuple[SeedResult, SessionTrace | None]:
    from proofgym.rollouts import run_rollout

    started = time.monotonic()
    try:
        result = await run_rollout(env_name, seed=seed, policy=policy, env_config=section.env_config,
                                   max_turns=section.turn_limit, max_time_s=section.max_time_s, run_id=run_id,
                                   metadata={"eval": section.app_id, "policy_name": section.resolved_policy_name})
    except Exception as exc:  # noqa: BLE001 - a seed the environment refuses fails that seed only
        return SeedResult(seed, "failed", duration_s=time.monotonic() - started,
                          error=f"{type(exc).__name__}: {exc}"), None
    session = result.session
    tokens = sum((call.prompt_tokens or 0) + (call.completion_tokens or 0)
                 for step in session.steps for call in step.lm_calls)
    first = session.steps[0].observation if session.steps else None
    data = first.get("data") if isinstance(first, dict) else None
    task_id = next((str(data[key]) for key in ("task_id", "problem_id", "record_id")
                    if isinstance(data, dict) and key in data), None)
    return SeedResult(seed, session.status, total_return=result.total_return, outcome_score=result.outcome_score,
                      num_steps=result.length, tokens=tokens, duration_s=time.monotonic() - started,
                      session_id=session.session_id, task_id=task_id, error=session.error,
                      invalid_reason=result.invalid_reason,
                      achievements=achievements_of(session.steps[-1].info if session.steps else None)), session


def _open_store(section: EvaluationSection) -> TraceStore:
    source = section.traces or DEFAULT_PATH
    try:
        return TraceStore(source)
    except Exception as exc:  # noqa: BLE001 - any failure to open the store stops the start, with its reason
        raise EvalError(f"evaluation.traces: cannot open the trace store {redact_url(str(source))!r}: "
                        f"{exc}") from None


def _check_environment(section: EvaluationSection) -> str:
    assert section.env_name is not None
    if section.env_name not in env_names():
        raise EvalError(f"evaluation.env_name: unknown environment {section.env_name!r}; expected one of {env_names()}")
    try:
        make(section.env_name, **section.env_config).close()
    except (ValueError, TypeError) as exc:
        raise EvalError(f"evaluation.env_config: {exc}") from None
    return section.env_name


def _build_policy(section: EvaluationSection, env_name: str) -> Any:
    from proofgym.policies import build_policy

    options = section.policy_options()
    if section.resolved_policy_name == "oracle":
        options.setdefault("env_name", env_name)
        options.setdefault("env_config", dict(section.env_config))
    try:
        return build_policy(section.resolved_policy_name, options)
    except (ConfigError, ValueError, TypeError) as exc:
        raise EvalError(f"evaluation.policy_config: {exc}") from None
