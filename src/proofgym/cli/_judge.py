"""``proofgym judge``: re-score stored trajectories (or one candidate text) with a rubric set.

Like ``inspect score``: the rollouts are not run again. Each session of a run is judged with the rubric set
(programmatic criteria here, the others by the LLM judge at ``--judge-url``); the results are shown per session and,
with ``--write`` (the default), stored as a new run of kind ``judge`` whose sessions are re-scored copies (new ids,
``metadata["rescored_from"]`` naming the original): stored sessions are never changed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import uuid
from pathlib import Path
from typing import Any, Optional, Sequence

import typer
from rich.console import Console
from rich.table import Table

from proofgym.cli._errors import fail, shown

console = Console()
ENV_VAR = "PROOFGYM_TRACES"
JUDGE_RUN_KIND = "judge"


def judge_command(
    rubric: Path = typer.Option(..., "--rubric", help="Rubric set: a registered name (verilog) or a YAML, TOML or "
                                                      "JSON file, ours or the reference's [rubric.weights] / "
                                                      "[rubric.event] / [rubric.outcome] form."),
    traces: Optional[str] = typer.Option(None, "--traces", help=f"Trace store: a SQLite file or a database URL "
                                                                f"(default: ${ENV_VAR}, else traces/proofgym.db)."),
    run: Optional[str] = typer.Option(None, "--run", help="The run to re-score (default: the latest run that is "
                                                          "not itself a judge run)."),
    session: Optional[str] = typer.Option(None, "--session", help="Re-score only this session."),
    candidate: Optional[Path] = typer.Option(None, "--candidate", help="Score this file's text as a one-step "
                                                                       "trajectory instead (no trace store)."),
    judge_url: Optional[str] = typer.Option(None, "--judge-url", help="OpenAI-compatible server of the LLM judge."),
    model: Optional[str] = typer.Option(None, "--model", help="The LLM judge's model (with --judge-url)."),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="Environment variable holding the LLM "
                                                                          "judge's API key."),
    skip_llm_criteria: bool = typer.Option(False, "--skip-llm-criteria", help="Without --judge-url, drop the "
                                                                              "criteria an LLM would judge."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    write: bool = typer.Option(True, "--write/--no-write", help="Store the re-scored sessions as a new run."),
) -> None:
    """Re-score stored trajectories with a rubric set: per session its env return, event and outcome totals, the
    blended reward and what abstained, then the means; the re-scored sessions are stored as a new run."""
    from proofgym.config import RL_CONFIG, RUBRIC_SET, ConfigError, require_file_kind
    from proofgym.judges import RUBRIC_SETS, RubricScorer, load_rubric_set

    registered = not rubric.exists() and str(rubric) in RUBRIC_SETS
    if not registered and not rubric.is_file():
        fail(f"--rubric: no rubric file at {str(rubric)!r} (nor a registered rubric set: {RUBRIC_SETS.names()})")
    try:
        if not registered:
            require_file_kind(rubric, RUBRIC_SET, RL_CONFIG)  # an RL config's [rubric] is a rubric set
        rubrics = RUBRIC_SETS.get(str(rubric)) if registered else load_rubric_set(rubric)
    except (ConfigError, OSError) as exc:
        fail(exc)
    judge = _llm_judge(judge_url, model, api_key_env)
    try:
        try:
            scorer = RubricScorer(rubrics, judge=judge, missing_judge="skip" if skip_llm_criteria else "error")
        except ValueError:
            fail(f"{rubric}: criteria {', '.join(rubrics.needs_llm())} need an LLM judge: pass --judge-url and "
                 "--model, or --skip-llm-criteria to drop them")
        if candidate is not None:
            _score_candidate(scorer, candidate, as_json)
        else:
            _rescore(scorer, rubric, traces, run, session, as_json, write)
    finally:
        if judge is not None:
            judge.close()


def _llm_judge(judge_url: Optional[str], model: Optional[str], api_key_env: Optional[str]) -> Any:
    if judge_url is None:
        if model is not None:
            fail("--model names the LLM judge's model: pass --judge-url too")
        return None
    if model is None:
        fail("--judge-url needs --model (the LLM judge's model)")
    key = None
    if api_key_env is not None:
        key = os.environ.get(api_key_env, "").strip()
        if not key:
            fail(f"--api-key-env: the environment variable {api_key_env!r} is not set")
    from proofgym.judges import LLMJudge

    try:
        return LLMJudge(judge_url, model, api_key=key)
    except (ValueError, TypeError) as exc:
        fail(f"--judge-url: cannot build the LLM judge: {exc}")


# -- one candidate ----------------------------------------------------------------------------------------------------

def _score_candidate(scorer: Any, path: Path, as_json: bool) -> None:
    from proofgym.traces import SessionTrace, StepTrace

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--candidate: cannot read {str(path)!r}: {exc}")
    # One step whose action is the text: event rubrics judge it as the decision, outcome rubrics as the whole.
    trace = SessionTrace(session_id="candidate", run_id="candidate", env_name="candidate",
                         steps=[StepTrace(index=0, action=text, done=True)])
    [score] = scorer.score_sync([trace])
    if as_json:
        typer.echo(json.dumps({"candidate": str(path), "judges": scorer.judges, **score.to_dict(calls=False)},
                              allow_nan=False))
        return
    table = Table(title=f"{shown(str(path))}: verdict per criterion")
    for column in ("level", "rubric", "criterion", "score", "judge", "reason"):
        table.add_column(column, overflow="fold")
    for level in [*score.events, *([] if score.outcome is None else [score.outcome])]:
        for verdict in level.criteria:
            value = "abstain" if verdict.score is None else f"{verdict.score:g}"
            table.add_row(level.level, shown(level.rubric), shown(verdict.id), value, shown(verdict.judge),
                          shown(verdict.reason))
    console.print(table)
    reward = score.reward
    console.print(f"event total {_number(reward.event_total)}, outcome total {_number(reward.outcome_total)}, "
                  f"blended reward {reward.value:+.3f}" + _abstained(reward.abstained), highlight=False)


# -- stored sessions --------------------------------------------------------------------------------------------------

def _rescore(scorer: Any, rubric: Path, traces: Optional[str], run: Optional[str], session: Optional[str],
             as_json: bool, write: bool) -> None:
    from proofgym.traces import DEFAULT_PATH, TraceStore, TraceStoreError

    location = traces or os.environ.get(ENV_VAR) or DEFAULT_PATH
    try:
        store = TraceStore(location, create=False)
    except TraceStoreError as exc:
        fail(exc)
    with store:
        try:
            run_id, sessions = _sessions(store, run, session)
            scores = scorer.score_sync(sessions)
            written = _write(store, scorer, rubric, run_id, sessions, scores) if write else None
        except TraceStoreError as exc:
            fail(exc)
    means = _means(scores)
    if as_json:
        typer.echo(json.dumps({"run_id": run_id, "rubric": str(rubric), "rubrics": _labels(scorer),
                               "judges": scorer.judges, "means": means, "written_run": written,
                               "sessions": [s.to_dict(calls=False) for s in scores]}, allow_nan=False))
        return
    table = Table(title=f"run {shown(run_id)} re-scored with {shown(', '.join(_labels(scorer)))}")
    for column, justify in (("session", "left"), ("env return", "right"), ("event total", "right"),
                            ("outcome total", "right"), ("blended", "right"), ("abstained", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for score in scores:
        reward = score.reward
        table.add_row(shown(score.session_id), f"{reward.env_return:+.3f}", _number(reward.event_total),
                      _number(reward.outcome_total), f"{reward.value:+.3f}", ", ".join(reward.abstained) or "-")
    table.add_row("mean", _number(means["env_return"], "+.3f"), _number(means["event_total"]),
                  _number(means["outcome_total"]), _number(means["blended"], "+.3f"),
                  f"{means['marked']} of {len(scores)}" if means["marked"] else "-", style="bold")
    console.print(table)
    console.print(f"judges: {', '.join(scorer.judges) or '-'}; the blended mean is over sessions where nothing "
                  "abstained", highlight=False)
    if written is not None:
        console.print(f"wrote {len(scores)} re-scored sessions to run {written}", highlight=False)


def _sessions(store: Any, run: Optional[str], session: Optional[str]) -> tuple[str, list[Any]]:
    """The run re-scored and its sessions (only ``session`` when given)."""
    if session is not None:
        found = store.get_session(session)
        if found is None or (run is not None and found.run_id != run):
            fail(f"--session: no session {session!r}" + (f" in run {run!r}" if run else "") + f" in {store.url}")
        return found.run_id, [found]
    runs = store.list_runs()
    if run is None:
        candidates = [r for r in runs if r.kind != JUDGE_RUN_KIND and r.n_sessions]
        if not candidates:
            fail(f"--traces: {store.url} has no run with sessions to re-score")
        run = candidates[-1].run_id
    elif run not in {r.run_id for r in runs}:
        fail(f"--run: unknown run {run!r} in {store.url}")
    sessions = list(store.iter_sessions(run_id=run))
    if not sessions:
        fail(f"--run: run {run!r} has no sessions to re-score")
    return run, sessions


def _write(store: Any, scorer: Any, rubric: Path, run_id: str, sessions: Sequence[Any],
           scores: Sequence[Any]) -> str:
    """Store the re-scored copies as a new run of kind ``judge``; its id."""
    new_run = f"judge-{uuid.uuid4().hex[:12]}"
    env_names = sorted({s.env_name for s in sessions})
    store.start_run(new_run, kind=JUDGE_RUN_KIND, env_name=env_names[0] if len(env_names) == 1 else None,
                    config={"rubric": str(rubric), "rubrics": _labels(scorer), "judges": scorer.judges,
                            "source_run": run_id, "source_sessions": [s.session_id for s in sessions]})
    copies = [dataclasses.replace(score.apply(trace), session_id=f"{trace.session_id}-{new_run}", run_id=new_run,
                                  metadata={**trace.metadata, "rescored_from": trace.session_id})
              for trace, score in zip(sessions, scores)]
    with store.ending_run(new_run):  # ended as error or cancelled (Ctrl-C) should the write fail
        store.write_sessions(copies)
        store.finish_run(new_run, status="ok", summary={"sessions": len(copies), **_means(scores)})
    return new_run


def _means(scores: Sequence[Any]) -> dict[str, Any]:
    """Means over the sessions (the blended one over those where nothing abstained)."""
    def mean(values: list[float | None]) -> float | None:
        kept = [v for v in values if v is not None]
        return math.fsum(kept) / len(kept) if kept else None

    rewards = [s.reward for s in scores]
    return {"env_return": mean([r.env_return for r in rewards]), "event_total": mean([r.event_total for r in rewards]),
            "outcome_total": mean([r.outcome_total for r in rewards]),
            "blended": mean([r.value for r in rewards if not r.abstained]),
            "marked": sum(1 for r in rewards if r.abstained)}


def _labels(scorer: Any) -> list[str]:
    return [f"{level}:{r.label}" for level, r in scorer.rubrics.rubrics()]


def _number(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _abstained(levels: Sequence[str]) -> str:
    return f" ({', '.join(levels)} abstained)" if levels else ""
