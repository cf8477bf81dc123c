"""``proofgym train``: GRPO through TRL with a live table; ``proofgym serve-reward``: the OpenRLHF reward server."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from proofgym.cli._errors import fail, fail_running
from proofgym.cli._slow_clients import body_timeout_option, header_timeout_option, max_connections_option
from proofgym.config import RL_CONFIG, RUN_CONFIG, ConfigError, load_run_config, require_file_kind

console = Console()

# Columns of the live table: (metrics row key, header, format).
_LIVE_COLUMNS = (
    ("step", "step", "{:d}"),
    ("reward", "reward", "{:+.3f}"),
    ("certified", "certified", "{:.1%}"),
    ("correct", "correct", "{:.1%}"),
    ("format_ok", "format ok", "{:.1%}"),
    ("kl", "KL", "{:.4f}"),
    ("zero_spread_groups", "flat groups", "{:.0%}"),
    ("step_time_s", "step s", "{:.2f}"),
)
_SHOWN_ROWS = 12


def train_command(
    config: Path = typer.Option(..., "--config", help="A run config with a training: section (kind: run), or an "
                                                      "RL config (kind = \"rl\")."),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help="Override training.grpo.steps."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir", help="Override training.output_dir."),
    dry_run: bool = typer.Option(False, "--dry-run", help="RL config: start every service, roll out and judge "
                                                          "one batch, stop before any update."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="RL config: roll out on this Ray cluster ('auto', host:port or "
                                           "ray://host:port); overrides [compute] ray_address."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="RL config: override [training] seed (the "
                                                                   "model's initialisation and the sampling)."),
) -> None:
    """Train a model with GRPO: the config's ``kind`` picks how. ``kind: run``: through TRL against the run
    config's reward path, as its ``training:`` section says; ``kind = "rl"``: multi-step RL over a task app
    (:mod:`proofgym.training.rl`). A file of another kind is refused in one line; an old file that declares no kind
    is told apart by its sections (the reference's RL TOML by [algorithm] / [rollout]) and loads with a deprecation
    line.

    Shows reward, certified and correct shares and KL per step; writes metrics.csv,
    reward_curve.png, summary.json and the final model (plus checkpoints) into the output directory;
    scores the held-out rows greedily before and after training, per rule branch.
    """
    from proofgym.training.rl import is_rl_config

    try:
        kind = require_file_kind(config, RUN_CONFIG, RL_CONFIG)
    except ConfigError as exc:
        fail(exc)
    if kind is RL_CONFIG or (kind is None and is_rl_config(config)):
        from proofgym.cli._rl_train import rl_train

        return rl_train(config, dry_run=dry_run, steps=steps, output_dir=output_dir, ray=ray, seed=seed)
    if dry_run or ray is not None or seed is not None:
        option = "--dry-run" if dry_run else "--ray" if ray is not None else "--seed"
        fail(f"{option} is for RL configs (kind = \"rl\"); {config} is a run config")
    from proofgym.training import run_training

    try:
        run = load_run_config(config)
    except ConfigError as exc:
        fail(exc)
    if run.training is None:
        fail(f"{config}: the run config has no training: section (model, dataset, grpo, ...)")
    total = steps or run.training.grpo.steps
    rows: list[dict[str, Any]] = []
    status = {"phase": "starting"}
    live = Live(_render(rows, total, status["phase"]), console=console, refresh_per_second=4, transient=False)

    def on_step(row: dict[str, Any]) -> None:
        rows.append(row)
        live.update(_render(rows, total, status["phase"]))

    def on_status(message: str) -> None:
        status["phase"] = message
        live.update(_render(rows, total, message))

    from transformers.utils import logging as hf_logging

    # The live table is the progress display (the function is untyped in transformers).
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    with warnings.catch_warnings():
        # transformers 5.24 warns on every GRPO config that gradient_checkpointing is deprecated, even when off.
        warnings.filterwarnings("ignore", message=".*gradient_checkpointing.*", category=FutureWarning)
        try:
            with live:
                result = run_training(run, steps=steps, output_dir=output_dir, on_step=on_step, on_status=on_status)
                live.update(_render(rows, total, "done"))
        except ConfigError as exc:
            fail_running(config, exc)
    _print_heldout(result)
    if result.heldout_during:
        console.print("held-out during training (step: all, worst branch): " + ", ".join(
            f"{step}: {report.accuracy:.1%}, {min(report.branch_accuracy().values()):.1%}"
            for step, report in result.heldout_during))
    if result.stopped_early:
        console.print(f"stopped early at step {result.heldout_during[-1][0]} of {total}: every branch at "
                      f"{run.training.heldout.stop_at:.1%} or above at two held-out evaluations in a row")
    console.print(f"metrics: {result.metrics_csv}")
    console.print(f"reward curve: {result.reward_curve}")
    console.print(f"final model: {result.final_model}")
    console.print(f"summary: {result.summary}  ({result.steps} steps, {result.wall_s:.0f} s)")


def serve_reward_command(
    config: Path = typer.Option(..., "--config", help="Run config (YAML or TOML) whose reward path scores."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; a non-loopback one needs an API key."),
    port: int = typer.Option(8001, "--port", min=0, max=65535, help="Port to bind."),
    invalid_fill: float = typer.Option(0.0, "--invalid-fill",
                                       help="Reward sent for an item whose verification was invalid (OpenRLHF "
                                            "needs a number; extra_logs flags it)."),
    max_body_bytes: int = typer.Option(64 << 20, "--max-body-bytes", min=1, help="Largest request body accepted."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
    header_timeout_s: float = header_timeout_option(),
    body_timeout_s: float = body_timeout_option(60.0),
    max_connections: int = max_connections_option(1024, "held"),
    batch_window_s: float = typer.Option(
        0.005, "--batch-window-s", min=0.0, max=1.0,
        help="Micro-batching: requests arriving within this many seconds of the oldest waiting one are verified "
             "as one batch (OpenRLHF sends one sample per request); 0 verifies each request alone."),
    batch_max_items: int = typer.Option(512, "--batch-max-items", min=1,
                                        help="Micro-batching: samples per batch at most (a larger request alone)."),
) -> None:
    """Serve the reward path to OpenRLHF: POST /get_reward {query, prompts, labels} -> {rewards, scores, extra_logs}.

    The API key comes from PROOFGYM_API_KEY (or ENVIRONMENT_API_KEY); without one the server only binds a
    loopback address. OpenRLHF sends no headers: give it the key in the URL, --reward.remote_url
    http://host:8001/get_reward?key=$PROOFGYM_API_KEY (the key is never logged). Other clients may send it
    as X-API-Key or Authorization: Bearer. OpenRLHF opens a connection per sample: --max-connections (default
    1024) must be at least the samples it awaits rewards for at once (beyond it they get 503 and retry a second
    later); the open-file limit is raised to hold them, or the cap lowered under it with a warning.
    """
    from proofgym.reward_server import reward_api_key, serve_reward

    if not math.isfinite(invalid_fill):
        fail("--invalid-fill must be a finite number")
    try:
        run = load_run_config(config)
        serve_reward(run, host=host, port=port, api_key=reward_api_key(), invalid_fill=invalid_fill,
                     max_body_bytes=max_body_bytes, log_level=log_level, header_timeout_s=header_timeout_s,
                     body_timeout_s=body_timeout_s, max_connections=max_connections,
                     batch_window_s=batch_window_s, batch_max_items=batch_max_items)
    except (ConfigError, ValueError) as exc:
        fail(exc)


def _render(rows: list[dict[str, Any]], total: int, phase: str) -> Group:
    table = Table(title=f"GRPO: step {rows[-1]['step'] if rows else 0} / {total}", caption=phase)
    for _, header, _ in _LIVE_COLUMNS:
        table.add_column(header, justify="right")
    for row in rows[-_SHOWN_ROWS:]:
        table.add_row(*(_cell(row.get(key), fmt) for key, _, fmt in _LIVE_COLUMNS))
    return Group(table)


def _cell(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return fmt.format(value)


def _print_heldout(result: Any) -> None:
    before, after = result.heldout_before, result.heldout_after
    if before is None or after is None:
        console.print("no held-out evaluation (heldout.n: 0)")
        return
    table = Table(title=f"held-out greedy accuracy ({after.n} rows): before -> after")
    for column in ("rule branch", "before", "after", "rows"):
        table.add_column(column, justify="right" if column != "rule branch" else "left")
    branches = sorted(set(before.per_branch) | set(after.per_branch))
    for branch in branches:
        b_ok, b_n = before.per_branch.get(branch, (0, 0))
        a_ok, a_n = after.per_branch.get(branch, (0, 0))
        table.add_row(branch, _share(b_ok, b_n), _share(a_ok, a_n), str(a_n or b_n))
    table.add_row("all", f"{before.accuracy:.1%}", f"{after.accuracy:.1%}", str(after.n), style="bold")
    table.add_row("certified", f"{before.certified_share:.1%}", f"{after.certified_share:.1%}", "")
    table.add_row("format ok", f"{before.format_ok_share:.1%}", f"{after.format_ok_share:.1%}", "")
    console.print(table)


def _share(correct: int, n: int) -> str:
    return f"{correct / n:.1%}" if n else "-"


