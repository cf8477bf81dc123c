"""``proofgym train --config rl.toml``: multi-step RL over a task app (the reference's RL config)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console

from proofgym.cli._errors import fail, fail_running
from proofgym.config import ConfigError
from proofgym.core import redact_url

console = Console()

_COLUMNS = ("step", "reward", "success", "valid", "invalid", "skipped_groups", "rollout_s", "judge_s", "update_s",
            "sync_s", "eval_success")


def rl_train(config: Path, *, dry_run: bool, steps: int | None, output_dir: Path | None,
             ray: str | None = None, seed: int | None = None) -> None:
    """Run (or with ``dry_run`` check) the RL config at ``config``, on the Ray cluster at ``ray`` if given; errors
    are one line naming the key."""
    from proofgym.training.rl import RLError, RLTrainer, load_rl_config

    try:
        rl = load_rl_config(config)
        if ray is not None:
            rl = rl.on_ray(ray)
        if seed is not None:
            rl.training.seed = seed
    except ConfigError as exc:
        fail(exc)
    console.print(f"{config}: {rl.algorithm.variety} on {rl.rollout.env_name} ({redact_url(rl.services.task_url)}), "
                  f"model {rl.model.name}")
    trainer = RLTrainer(rl, output_dir=output_dir, on_row=_print_row, on_note=lambda line: console.print(line))
    try:
        result = trainer.run(dry_run=dry_run, iterations=steps)
    except (RLError, ConfigError, ConnectionError, ImportError) as exc:  # joining Ray: no cluster, or no Ray
        fail_running(config, exc)
    if dry_run:
        console.print(f"dry run: {json.dumps(result.dry_run, default=str)}", soft_wrap=True)
        console.print(f"dry run report: {result.output_dir / 'dry_run.json'}")
        report = result.dry_run
        if not report.get("valid"):
            fail("dry run: no rollout of the batch was valid")
        if not report.get("trainable"):
            fail(f"dry run: no valid rollout of the batch can be trained on: {'; '.join(report['untrainable'][:3])}")
        if report["invalid_share"] > report["max_error_share"]:
            reasons = "; ".join(map(str, (report["errors"] + report["untrainable"])[:2]))
            fail(f"dry run: {report['rollouts'] - report['trainable']} of {report['rollouts']} rollouts were invalid "
                 f"or untrainable, over training.max_error_share = {report['max_error_share']:g}: the first "
                 f"iteration would stop the run ({reasons})")
        console.print("dry run ok: services started, one batch rolled out and judged, no update made")
        return
    console.print(f"held-out success: {_share(result.eval_before)} -> {_share(result.eval_after)} "
                  f"({result.iterations} iterations, {result.wall_s:.0f} s)")
    console.print(f"metrics: {result.metrics_csv}\nreward curve: {result.reward_curve}\n"
                  f"checkpoint: {result.checkpoint}\ntraces: {result.output_dir / 'traces.db'}")
    if result.stopped_by_signal:
        console.print(f"stopped by {result.stopped_by or 'a signal'} at iteration {result.iterations}; "
                      "run again to resume")


def _print_row(row: dict[str, Any]) -> None:
    console.print("  ".join(f"{key}={_cell(row.get(key))}" for key in _COLUMNS if key in row))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "-" if not math.isfinite(value) else f"{value:.3f}"
    return str(value)


def _share(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.1%}"
