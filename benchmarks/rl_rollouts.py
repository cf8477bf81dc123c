"""Rollouts per second from the RL trainer against a local task app, and the step-time split.

The trainer of ``configs/rl_fact_finding_tiny.toml`` (``proofgym:tiny`` served in-process, ``proofgym serve
fact_finding`` started locally, no warm-up) collects ``--rollouts`` rollouts by cid over HTTP with one in flight
(the baseline, measured in the same run) and with ``max_concurrent_rollouts`` in flight; each figure is the median of
``--runs`` runs, printed with the ratio. Then ``--iterations`` training iterations run and the medians of their
split are printed: waiting for rollouts, judging, updating, syncing the weights.

    python benchmarks/rl_rollouts.py [--rollouts 32] [--runs 3] [--iterations 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from proofgym.rl import RLTrainer, load_rl_config

CONFIG = Path(__file__).parents[1] / "configs" / "rl_fact_finding_tiny.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    config = load_rl_config(CONFIG)
    config.training.warmup_steps = 0
    with tempfile.TemporaryDirectory() as folder:
        trainer = RLTrainer(config, output_dir=Path(folder) / "run")
        trainer._runner = asyncio.Runner()  # what RLTrainer.run sets up: one event loop for every batch
        trainer._start()
        try:
            figures = {}
            for concurrency in (1, config.concurrency):
                trainer.config.rollout.max_concurrent_rollouts = concurrency
                rates = []
                for _ in range(args.runs):
                    seeds = trainer._train_seeds(args.rollouts)
                    started = time.perf_counter()
                    rollouts = trainer._runner.run(trainer._collect(seeds))
                    rates.append(sum(r.valid for r in rollouts) / (time.perf_counter() - started))
                figures[concurrency] = statistics.median(rates)
                print(f"{concurrency:3d} in flight: {figures[concurrency]:6.2f} valid rollouts/s "
                      f"(median of {args.runs} x {args.rollouts})")
            print(f"concurrent / one at a time: x{figures[config.concurrency] / figures[1]:.2f}")
            for _ in range(args.iterations):
                trainer._iterate()
            rows = trainer.metrics.rows
            split = {key: statistics.median(row[key] for row in rows)
                     for key in ("rollout_s", "judge_s", "update_s", "sync_s", "step_s")}
            total = split.pop("step_s")
            print(f"step {total:.2f} s (median of {len(rows)}, {config.training.batch_size} seeds x "
                  f"{config.training.group_size}): " + ", ".join(
                      f"{key[:-2]} {value:.3f} s ({value / total:.0%})" for key, value in split.items()))
        finally:
            trainer._close()
            trainer._runner.close()


if __name__ == "__main__":
    main()
