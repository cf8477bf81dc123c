"""``proofgym verilog``: judge a Verilog design against a problem's testbench, in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from proofgym.cli._errors import fail, shown

verilog_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                          help="Judge Verilog designs against problem testbenches (sandboxed Icarus Verilog).")
console = Console()

_STYLE = {"certified": "green", "refuted": "yellow", "invalid": "magenta"}


@verilog_app.command("judge")
def judge_command(
    problem: str = typer.Option(..., "--problem", help="A built-in problem id (Prob001_...) or a VerilogEval path "
                                                       "prefix (DIR/Prob001_zero)."),
    design: Path = typer.Option(..., "--design", help="Verilog file defining module TopModule."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as one JSON object."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Wall-clock limit of one sandbox launch (s)."),
    allow_unsandboxed: bool = typer.Option(False, "--allow-unsandboxed",
                                           help="Run without bubblewrap if it cannot start (unsafe)."),
) -> None:
    """Judge a design; the outcome (pass or not) never changes the exit status, errors in the command do."""
    from proofgym.verilog import JudgeConfig, get_problem, judge

    try:
        target = get_problem(problem)
        source = design.read_text(encoding="utf-8")
    except KeyError as exc:
        fail(str(exc.args[0]))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(str(exc))
    settings: dict[str, Any] = {"allow_unsandboxed": allow_unsandboxed}
    if timeout is not None:
        settings["timeout_s"] = timeout
    try:
        config = JudgeConfig(**settings)
    except ValueError as exc:
        fail(str(exc))
    verdict = judge(target, source, config=config)
    evidence = verdict.evidence
    summary = {
        "problem": target.id,
        "outcome": verdict.outcome.value,
        "reason": verdict.reason,
        "detail": evidence.get("detail"),
        "mismatches": evidence.get("mismatches"),
        "samples": evidence.get("samples"),
        "expected_samples": evidence.get("expected_samples"),
        "duration_s": round(verdict.timings.get("judge_s", 0.0), 4),
    }
    if as_json:
        typer.echo(json.dumps({**summary, "verdict": verdict.to_dict()}, default=str))
        return
    style = _STYLE[verdict.outcome.value]
    console.print(f"[{style}]{verdict.outcome.value}[/{style}] {shown(target.id)}: {shown(verdict.reason)}",
                  highlight=False)
    if summary["detail"]:
        console.print(shown(summary["detail"]), highlight=False)
    if summary["samples"] is not None:
        console.print(f"mismatches {summary['mismatches']} in {summary['samples']} samples "
                      f"(reference run: {summary['expected_samples']})", highlight=False)
    for hint in evidence.get("hints") or ():
        console.print(f"  {shown(hint)}", highlight=False)
    log = evidence.get("compile_log") or evidence.get("log")
    if log:
        console.print(shown(log), highlight=False)
    console.print(f"judged in {summary['duration_s']:.3f} s"
                  f"{'' if evidence.get('sandboxed', True) else ' WITHOUT a sandbox'}", highlight=False)


