"""``proofgym eval --config configs/eval/grant.toml``: evaluate a policy on seeds, here or on a task app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from proofgym.cli._errors import fail, fail_running, print_error, shown
from proofgym.config import ConfigError
from proofgym.core import redact_url

console = Console()
_stderr = Console(stderr=True)

_STATUS_STYLE = {"ok": "green", "error": "red", "timeout": "yellow", "cancelled": "magenta", "failed": "red"}


def eval_command(
    config: Path = typer.Option(..., "--config", help="Eval config (TOML, kind = \"eval\"): [evaluation], "
                                                      "[evaluation.env_config], [evaluation.policy_config]."),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the summary and every result "
                                                                     "as JSON to this file."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="Run the rollouts on this Ray cluster ('auto', host:port or "
                                           "ray://host:port); overrides [compute] ray_address."),
) -> None:
    """Roll a policy out on every seed of an eval config and summarise; exit 1 if any rollout failed or the
    environment could judge none of them (every outcome ``invalid``, e.g. its toolchain is not installed).

    The rollouts run on the task app at [evaluation] task_app_url, or here when there is none. Each judge of
    [evaluation.judge] / [[evaluation.judges]] then scores every finished trajectory: the summary gives its mean
    score and its Pearson r against the environment's score. Unknown [evaluation] keys are named on a warning line,
    never refused; so is a judge whose Python code cannot be loaded (it is reported as not run). An old file's
    [eval] is read as [evaluation], with a deprecation line.
    """
    from proofgym.evaluation import EvalError, load_eval_config, run_eval
    from proofgym.evaluation import build_judges

    try:
        loaded = load_eval_config(config)
        section, compute = loaded.evaluation, _with_ray(loaded.compute, ray)
    except ConfigError as exc:
        fail(exc)
    try:
        judges = build_judges(section.judge_entries())
    except (ConfigError, EvalError) as exc:
        fail_running(config, exc)
    problems = [f"{judge.problem}; judge {judge.name!r} is not run" for judge in judges if judge.problem]
    for line in [*section.warnings(), *problems]:
        _stderr.print(f"[yellow]warning:[/yellow] {shown(f'{config}: {line}')}", highlight=False, soft_wrap=True)
    where = f"task app {redact_url(section.task_app_url)}" if section.task_app_url else \
        f"on the Ray cluster at {compute.ray_address}" if compute and compute.ray_address else "in-process"
    console.print(f"eval {section.app_id or config.stem}: {len(section.seeds)} seeds, concurrency "
                  f"{section.concurrency}, policy {section.resolved_policy_name}, {where}", highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("rollouts", total=len(section.seeds))

        def show(result: Any) -> None:
            progress.console.print(_seed_line(result), highlight=False, soft_wrap=True)
            progress.advance(task)

        try:
            report = run_eval(section, on_result=show, judges=judges, compute=compute)
        except EvalError as exc:
            progress.stop()
            fail_running(config, exc)
    _print_summary(report)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    if report.nothing_judged:
        print_error(f"no rollout was judged: all {len(report.results)} are invalid "
                    f"({'; '.join(map(_headline, report.invalid_reasons()))})")
    if report.failed or report.nothing_judged:
        raise typer.Exit(1)


def _with_ray(compute: Any, address: str | None) -> Any:
    """``[compute]`` with ``--ray ADDRESS`` in it (a ``ConfigError`` naming ``--ray`` when it is no address)."""
    if address is None:
        return compute
    from pydantic import ValidationError

    from proofgym.evaluation import ComputeSection

    try:
        return ComputeSection.model_validate({**(compute.model_dump() if compute else {}), "ray_address": address})
    except ValidationError:
        raise ConfigError(f"--ray: {address!r} is not a Ray address; expected 'auto', host:port or "
                          "ray://host:port") from None


def _seed_line(result: Any) -> str:
    style = _STATUS_STYLE.get(result.status, "")
    head = f"seed {result.seed:<4} [{style}]{result.status:<6}[/{style}]"
    if result.status == "failed":
        return f"{head} {shown(result.error or '')}"
    if result.invalid:
        outcome = f"[yellow]invalid[/yellow] ({shown(_headline(result.invalid_reason))})"
    else:
        outcome = "-" if result.outcome_score is None else f"{result.outcome_score:g}"
    tokens = "-" if result.tokens is None else str(result.tokens)
    line = (f"{head} outcome {outcome:<3} return {result.total_return:+.3f} steps {result.num_steps:<2} "
            f"tokens {tokens:<5} {result.duration_s:5.2f}s {shown(result.task_id or '')}")
    if result.error:
        line += f"  ({shown(result.error)})"
    return line


def _print_summary(report: Any) -> None:
    summary = report.summary()
    not_passed = summary["ok"] - summary["passed"] - summary["invalid"]
    invalid = f"[yellow]{summary['invalid']}[/yellow]" if summary["invalid"] else "0"
    failed = f"[red]{summary['failed']}[/red]" if summary["failed"] else "0"
    table = Table(title=f"{report.env_name} / {report.policy_name}" + (f" / {report.model}" if report.model else "")
                  + ": means over judged ok rollouts")
    for column in ("return", "outcome", "pass rate", "tokens", "wall time"):
        table.add_column(column, justify="right")

    def number(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    table.add_row(number(summary["mean_return"], "+.3f"), number(summary["mean_outcome"], ".3f"),
                  number(summary["pass_rate"], ".1%"), number(summary["tokens"], "d"),
                  f"{summary['wall_time_s']:.2f} s")
    console.print(table)
    console.print(f"{summary['rollouts']} rollouts: [green]{summary['passed']}[/green] passed, {not_passed} not "
                  f"passed, {invalid} invalid (not judged), {failed} failed to run", highlight=False, soft_wrap=True)
    for reason, count in summary["invalid_reasons"].items():
        console.print(f"[yellow]invalid[/yellow] {count} of {summary['rollouts']} (not judged): {shown(reason)}",
                      highlight=False, soft_wrap=True)
    for judge in summary["judges"]:
        console.print(_judge_line(judge), highlight=False, soft_wrap=True)
    if summary.get("achievements"):
        _print_achievements(summary["achievements"], summary["mean_return"])
    console.print(f"traces: {report.traces} (run {report.run_id})", highlight=False)


def _print_achievements(found: dict[str, Any], mean_return: float | None) -> None:
    """The environment's achievements: each one's success rate, then the score and progress beside the return."""
    table = Table(title=f"achievements over {found['episodes']} episodes")
    table.add_column("achievement")
    table.add_column("success rate", justify="right")
    for name, rate in found["success_rates"].items():
        table.add_row(shown(name), f"{rate:.1f} %")
    console.print(table)
    mean = "-" if mean_return is None else f"{mean_return:+.3f}"
    console.print(f"score {found['score']:.2f} % (exp(mean ln(1 + p)) - 1), progress {found['progress']:.1%} "
                  f"(achievements unlocked / {found['achievements']}), mean return {mean}", highlight=False)


_SCORE_KIND = {"blended": "blended reward", "outcome": "outcome total", "event": "event total"}


def _judge_line(judge: dict[str, Any]) -> str:
    """``judge NAME (what it scores): mean M over N scored, Pearson r vs official R (P pairs), K invalid verdicts``."""
    head = f"judge {shown(judge['name'])} ({_SCORE_KIND.get(judge['score_kind'], judge['score_kind'])})"
    if judge["problem"]:
        return f"{head}: [yellow]not run[/yellow] ({shown(judge['problem'])})"
    mean = "n/a" if judge["mean"] is None else f"{judge['mean']:.3f}"
    r = "n/a" if judge["pearson_r"] is None else f"{judge['pearson_r']:+.3f}"
    line = (f"{head}: mean {mean} over {judge['scored']} scored, Pearson r vs official {r} ({judge['pairs']} pairs), "
            f"{judge['invalid_verdicts']} invalid verdicts")
    extra = [f"{judge[key]} {what}" for key, what in (("abstained", "abstained"), ("no_trace", "without a trace"))
             if judge[key]]
    return line + (f"; {', '.join(extra)}" if extra else "")


def _headline(reason: str | None) -> str:
    """A reason's first clause (up to its first ``;``, on one line): what a per-seed line has room for."""
    head = (reason or "").strip().split("\n", 1)[0].split(";", 1)[0].strip()
    return head if len(head) <= 80 else head[:79] + "…"


