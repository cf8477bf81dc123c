"""``proofgym traces``: list, show and export the sessions of a trace store."""

from __future__ import annotations

import contextlib
import json
import os
import time
from enum import Enum
from pathlib import Path
from typing import Any, Iterator, Optional

import typer
from rich.console import Console
from rich.table import Table

from proofgym.cli._errors import shown

traces_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                         help="List, show and export recorded rollouts (the trace store).")
console = Console()
errors = Console(stderr=True)

ENV_VAR = "PROOFGYM_TRACES"
_DB_HELP = f"Trace store: a SQLite file or a database URL (default: ${ENV_VAR}, else traces/proofgym.db)."
_OUTCOME_STYLE = {"certified": "green", "pass": "green", "refuted": "yellow", "fail": "yellow", "invalid": "magenta",
                  "format_error": "red"}


class ExportFormat(str, Enum):
    jsonl = "jsonl"
    hf = "hf"


def _fail(message: str, code: int = 2) -> typer.Exit:
    errors.print(f"[red]error:[/red] {shown(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _open(db: Optional[str]) -> Any:
    """The store at ``db`` (or the default), opened without creating anything."""
    from proofgym.traces import DEFAULT_PATH, TraceStore, TraceStoreError

    location = db or os.environ.get(ENV_VAR) or DEFAULT_PATH
    try:
        return TraceStore(location, create=False)
    except TraceStoreError as exc:
        raise _fail(str(exc)) from None


def _filters(run: Optional[str], env: Optional[str], min_reward: Optional[float], max_reward: Optional[float],
             status: Optional[str], limit: Optional[int]) -> dict[str, Any]:
    return {"run_id": run, "env_name": env, "min_reward": min_reward, "max_reward": max_reward, "status": status,
            "limit": limit}


@contextlib.contextmanager
def _guard(store: Any) -> Iterator[None]:
    """Close the store; report invalid filters and database failures as one error line (exit 2)."""
    from proofgym.traces import TraceStoreError

    try:
        with store:
            yield
    except TraceStoreError as exc:
        raise _fail(str(exc)) from None


RUN = typer.Option(None, "--run", help="Only sessions of this run id.")
ENV = typer.Option(None, "--env", help="Only sessions of this environment.")
MIN_REWARD = typer.Option(None, "--min-reward", help="Only sessions with total reward >= X.")
MAX_REWARD = typer.Option(None, "--max-reward", help="Only sessions with total reward <= X.")
STATUS = typer.Option(None, "--status", help="Only sessions with this status (ok, error, timeout, cancelled).")


@traces_app.command("ls")
def list_sessions(
    db: Optional[str] = typer.Option(None, "--db", help=_DB_HELP),
    run: Optional[str] = RUN, env: Optional[str] = ENV, min_reward: Optional[float] = MIN_REWARD,
    max_reward: Optional[float] = MAX_REWARD, status: Optional[str] = STATUS,
    limit: Optional[int] = typer.Option(50, "--limit", help="Show at most N sessions (oldest first)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per session instead of a table."),
) -> None:
    """List sessions: ids, status, steps, reward and outcome score."""
    store = _open(db)
    filters = _filters(run, env, min_reward, max_reward, status, limit)
    with _guard(store):
        summaries = store.list_sessions(**filters)
        if as_json:
            for summary in summaries:
                typer.echo(json.dumps(summary.to_dict()))
            return
        total = store.count_sessions(**{k: v for k, v in filters.items() if k != "limit"})
        table = Table(title=shown(f"{len(summaries)} of {total} sessions in {store.url}"))
        for column in ("session", "run", "env", "seed", "status", "steps", "reward", "score", "correlation id",
                       "started"):
            table.add_column(column, overflow="fold")
        for s in summaries:
            status_text = s.status if s.status == "ok" else f"[red]{s.status}[/red]"
            table.add_row(shown(s.session_id), shown(s.run_id), shown(s.env_name), _text(s.seed), status_text,
                          str(s.n_steps), f"{s.total_reward:+.4g}", _number(s.outcome_score),
                          shown(s.correlation_id or "-"), _when(s.started_at))
        console.print(table)


@traces_app.command("show")
def show(
    session_or_correlation_id: str = typer.Argument(..., metavar="SESSION_ID_OR_CORRELATION_ID",
                                                   help="A session id, or a correlation id (shows its sessions)."),
    db: Optional[str] = typer.Option(None, "--db", help=_DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print each session as one JSON object."),
) -> None:
    """Show a session: its steps, actions, rewards, verdicts and LM calls (tokens, latency)."""
    store = _open(db)
    with _guard(store):
        found = store.get_session(session_or_correlation_id)
        sessions = [found] if found is not None else store.find_by_correlation_id(session_or_correlation_id)
        if not sessions:
            raise _fail(f"no session or correlation id {session_or_correlation_id!r} in {store.url}", code=1)
        for session in sessions:
            if as_json:
                typer.echo(json.dumps(session.to_dict(), ensure_ascii=False))
            else:
                _print_session(session)


@traces_app.command("export")
def export(
    out: Path = typer.Option(..., "--out", help="Output: a JSONL file, or a folder for --format hf."),
    db: Optional[str] = typer.Option(None, "--db", help=_DB_HELP),
    export_format: ExportFormat = typer.Option(ExportFormat.jsonl, "--format",
                                               help="jsonl: one session per line; hf: a datasets.Dataset saved "
                                                    "with save_to_disk (flat rows for SFT / filtering)."),
    run: Optional[str] = RUN, env: Optional[str] = ENV, min_reward: Optional[float] = MIN_REWARD,
    max_reward: Optional[float] = MAX_REWARD, status: Optional[str] = STATUS,
    limit: Optional[int] = typer.Option(None, "--limit", help="Export at most N sessions (oldest first)."),
) -> None:
    """Export sessions to JSONL or to a Hugging Face dataset folder."""
    store = _open(db)
    filters = _filters(run, env, min_reward, max_reward, status, limit)
    with _guard(store):
        try:
            if export_format is ExportFormat.jsonl:
                count = store.export_jsonl(out, **filters)
            else:
                dataset = store.to_dataset(**filters)
                dataset.save_to_disk(str(out))
                count = len(dataset)
        except OSError as exc:
            raise _fail(f"cannot write {out}: {exc}") from None
        console.print(shown(f"exported {count} session(s) from {store.url} to {out} ({export_format.value})"),
                      highlight=False, soft_wrap=True)


def _print_session(session: Any) -> None:
    status = session.status if session.status == "ok" else f"[red]{session.status}[/red]: {shown(session.error or '')}"
    duration = ("" if session.ended_at is None else f" ({session.ended_at - session.started_at:.3g} s)")
    console.print(f"[bold]session {shown(session.session_id)}[/bold]  run {shown(session.run_id)}  "
                  f"env {shown(session.env_name)}  seed {_text(session.seed)}  "
                  f"policy {shown(session.policy_id or '-')}", highlight=False)
    console.print(f"correlation id {shown(session.correlation_id or '-')}  status {status}  "
                  f"started {_when(session.started_at)}{duration}", highlight=False)
    outcome = session.outcome_reward
    console.print(f"total reward {session.total_reward:+.4g}" + (
        "" if outcome is None else f"  outcome: total {outcome.total:+.4g} over {outcome.steps} steps, score "
                                   f"{_number(outcome.score)} ({shown(outcome.kind)}, from {shown(outcome.source)})"),
        highlight=False)
    if session.metadata:
        console.print(f"metadata {_brief(session.metadata, 200)}", highlight=False)
    table = Table(title=f"{len(session.steps)} steps")
    for column in ("#", "action", "tool / result", "reward", "event rewards", "verdict", "LM calls", "end"):
        table.add_column(column, overflow="fold")
    for step in session.steps:
        env = step.env_event
        tool = "-" if env is None else f"{shown(env.tool or '-')} -> {_brief(env.result, 40)}"
        rewards = shown(" ".join(f"{r.kind}{'/' + r.key if r.key else ''}={r.value:+.3g}"
                                  for r in step.event_rewards))
        verdict = "-"
        if step.verification is not None:
            style = _OUTCOME_STYLE.get(step.verification.outcome, "")
            outcome_text = shown(step.verification.outcome)
            if style:
                outcome_text = f"[{style}]{outcome_text}[/{style}]"
            verdict = f"{shown(step.verification.verifier)}: {outcome_text}"
        calls = "\n".join(_call(call) for call in step.lm_calls) or "-"
        end = "done" if step.done else "truncated" if step.truncated else ""
        table.add_row(str(step.index), _brief(step.action, 60), tool, f"{step.reward:+.4g}", rewards or "-",
                      verdict, calls, end)
    console.print(table)


def _call(call: Any) -> str:
    known = call.prompt_tokens is not None or call.completion_tokens is not None
    tokens = f"{_text(call.prompt_tokens)}+{_text(call.completion_tokens)} tok" if known else "no token counts"
    latency = "" if call.latency_s is None else f" {call.latency_s * 1000:.0f} ms"
    error = f" [red]{shown(call.error)}[/red]" if call.error else ""
    return f"{shown(call.model)}: {tokens}{latency}{error}"


def _brief(value: Any, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return shown(text if len(text) <= width else text[:width - 1] + "…")


def _text(value: Any) -> str:
    return "-" if value is None else str(value)


def _number(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.4g}"


def _when(timestamp: Optional[float]) -> str:
    if not timestamp:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))
