"""The ``proofgym`` command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, cast

import typer
from rich.console import Console
from rich.table import Table

import proofgym
from proofgym.config import ConfigError, load_run_config
from proofgym.cli._completion_file import read_completions
from proofgym.cli._eval import eval_command
from proofgym.cli._judge import judge_command
from proofgym.cli._crafter import crafter_app
from proofgym.cli._demo import demo_command
from proofgym.cli._domain import domain_app
from proofgym.cli._errors import fail, shown
from proofgym.cli._rules import rules_app
from proofgym.cli._serve import serve_command
from proofgym.cli._serve_model import serve_model_command
from proofgym.cli._traces import traces_app
from proofgym.cli._train import serve_reward_command, train_command
from proofgym.cli._verilog import verilog_app
from proofgym.cli._view import view_command

if TYPE_CHECKING:
    from collections import Counter

    from proofgym.cli._completion_file import CompletionRecord
    from proofgym.rewards import ScoredItem
    from proofgym.runtime import VerificationRuntime

# rich_markup_mode=None on every Typer app: plain click help, so that a help text's "[eval]" or "[rubric.weights]"
# is printed as written (rich markup took them for style tags and dropped them).
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Auditable verifiable rewards for LLM training.")
app.add_typer(rules_app, name="rules")
app.add_typer(domain_app, name="domain")
app.add_typer(verilog_app, name="verilog")
app.add_typer(crafter_app, name="crafter")
app.add_typer(traces_app, name="traces")
app.command("serve")(serve_command)
app.command("eval")(eval_command)
app.command("train")(train_command)
app.command("serve-reward")(serve_reward_command)
app.command("demo")(demo_command)
app.command("judge")(judge_command)
app.command("serve-model")(serve_model_command)
app.command("view")(view_command)
console = Console()

_OUTCOME_STYLE = {"certified": "green", "refuted": "yellow", "invalid": "magenta", "format_error": "red"}
_SHORT = {"format": "fmt", "certified": "cert", "correct": "corr", "grounded": "grnd", "graded": "grad",
          "rejected": "rej"}


def _version(value: bool) -> None:
    if value:
        console.print(f"proofgym {proofgym.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
) -> None:
    """proofgym: turn machine-checkable evidence into bounded, hack-resistant rewards."""


@app.command()
def score(
    config: Path = typer.Option(..., "--config", help="Run config (YAML or TOML)."),
    completions: Path = typer.Option(..., "--completions", help="JSONL file: one {completion, prompt?, gold?, "
                                                                "source_facts?, id?, note?} object per line."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per item instead of a table."),
) -> None:
    """Score a file of completions with a run config's reward path and show why each got its reward."""
    try:
        run = load_run_config(config)
        records = read_completions(completions)
        reward_fn = run.reward_function()
    except (ConfigError, ValueError) as exc:
        fail(exc)
    with reward_fn:
        items = reward_fn.score([r.prompt for r in records], [r.completion for r in records],
                                [r.reference() for r in records])
        # RunConfig.reward_function's runtime is a VerificationRuntime.
        metrics = cast("VerificationRuntime", reward_fn.runtime).metrics().to_dict()
    if as_json:
        for record, item in zip(records, items):
            typer.echo(json.dumps({"id": record.id, "note": record.note, **item.to_dict()}, default=str))
        return
    _print_table(run.name, records, items, reward_fn.shaper.bounds)
    _print_summary(items, reward_fn.last_batch.outcomes, metrics)


def _print_table(name: str, records: list[CompletionRecord], items: list[ScoredItem],
                 bounds: tuple[float, float]) -> None:
    table = Table(title=f"{name}: reward per completion (bounds {bounds[0]:g} .. {bounds[1]:g})")
    for column in ("#", "item", "outcome", "reward", "decision", "components", "why"):
        table.add_column(column, overflow="fold")
    for record, item in zip(records, items):
        style = _OUTCOME_STYLE.get(item.outcome, "")
        reward = "None (abstain)" if item.reward is None else f"{item.reward:+.3f}"
        claimed = item.claim.decision if item.claim else "-"
        certified = item.verdict.decision if item.verdict and item.verdict.decision else "-"
        components = " ".join(f"{_SHORT.get(k, k)}={v:.3g}" for k, v in item.components.items())
        table.add_row(str(item.index), shown(record.note or record.id or ""), f"[{style}]{item.outcome}[/{style}]",
                      reward, shown(f"{claimed} / {certified}"), shown(components), shown(item.reason))
    console.print(table)
    console.print("decision column: claimed / certified by the verifier")


def _print_summary(items: list[ScoredItem], counts: Counter[str], metrics: dict[str, Any]) -> None:
    rewards = [item.reward for item in items if item.reward is not None]
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    console.print(f"{len(items)} items: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                  + f"; mean reward {mean:+.3f} over {len(rewards)} scored")
    console.print("runtime: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                          for k, v in metrics.items() if not isinstance(v, dict)))


def main() -> None:
    # Before any command imports torch (OpenMP reads its wait policy once): every command that runs torch (train,
    # eval, serve-model, the task app train starts, the demo) then has waiting threads sleep instead of spin.
    from proofgym.training import prefer_passive_waiting

    prefer_passive_waiting()
    app()
