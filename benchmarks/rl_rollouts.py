"""Rollouts per second from the RL trainer against a local task app, and the step-time split.

The trainer of ``configs/rl/fact_finding_tiny.toml`` (``proofgym:tiny`` served in-process, ``proofgym serve
fact_finding`` started locally, after its format warm-up) collects ``--rollouts`` rollouts by cid over HTTP with one
in flight (the baseline, measured in the same run) and with ``max_concurrent_rollouts`` in flight; each figure is the
median of ``--runs`` runs, printed with the ratio. Then ``--iterations`` training iterations run and the medians of
their split are printed: waiting for rollouts, judging, updating, syncing the weights. Then the gain of
``training.overlap_rollouts`` (the next batch collected during the update, one update stale) against strictly
on-policy iterations, in the same trainer, alternating blocks of 4 iterations, ``--runs`` blocks of each (the
first iteration of an overlapped block collects before its update, as a run's first does).
Last, one batch's update is timed with the length-bucketed microbatches against one padded batch (the earlier
update, same gradient), ``--runs`` each.

    python benchmarks/rl_rollouts.py [--rollouts 32] [--runs 3] [--iterations 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

import proofgym.training.rl._trainer as trainer_module
from proofgym.training.rl import RLTrainer, load_rl_config, sampled_turns

CONFIG = Path(__file__).parents[1] / "configs" / "rl" / "fact_finding_tiny.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    config = load_rl_config(CONFIG)
    with tempfile.TemporaryDirectory() as folder:
        trainer = RLTrainer(config, output_dir=Path(folder) / "run")
        trainer._runner = asyncio.Runner()  # what RLTrainer.run sets up: one event loop for every batch
        trainer._start()
        trainer._warmup()
        trainer._freeze_reference()  # the config's kl_coef needs the reference, as RLTrainer.run sets it
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
            per_mode: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.runs):
                for overlap in (False, True):
                    trainer.config.training.overlap_rollouts = overlap
                    # a block of 4: overlapped, the first collects before its update, the other 3 during one
                    end, started = trainer.iteration + 4, time.perf_counter()
                    while trainer.iteration < end:
                        trainer._iterate(end)
                    per_mode[overlap].append((time.perf_counter() - started) / 4)
            trainer.config.training.overlap_rollouts = False
            plain, ahead = (statistics.median(per_mode[mode]) for mode in (False, True))
            print(f"iteration strictly on-policy {plain:.2f} s, rollouts overlapped with the update {ahead:.2f} s "
                  f"(per iteration, medians of {len(per_mode[False])} blocks of 4): x{plain / ahead:.2f}")
            rollouts = trainer._runner.run(trainer._collect(trainer._train_seeds(config.training.batch_size
                                                                                 * config.training.group_size)))
            turns = [dataclasses.replace(turn, advantage=1.0) for rollout in rollouts if rollout.valid
                     for turn in sampled_turns(rollout.trace)]  # type: ignore[arg-type, union-attr]
            times = {}
            for name, budget in (("one padded batch", 10**9), ("bucketed", trainer_module.MICROBATCH_TOKENS)):
                runs = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    with _budget(budget):
                        trainer._update(turns)
                    runs.append(time.perf_counter() - started)
                times[name] = statistics.median(runs)
                print(f"update of {len(turns)} turns, {name}: {times[name]:.3f} s (median of {args.runs})")
            print(f"one padded batch / bucketed: x{times['one padded batch'] / times['bucketed']:.2f}")
        finally:
            trainer._close()
            trainer._runner.close()


@contextlib.contextmanager
def _budget(tokens: int):
    """The update's microbatch size set to ``tokens`` padded tokens (``10**9``: one padded batch)."""
    saved = trainer_module.MICROBATCH_TOKENS
    trainer_module.MICROBATCH_TOKENS = tokens
    try:
        yield
    finally:
        trainer_module.MICROBATCH_TOKENS = saved


if __name__ == "__main__":
    from _record import record

    record("rl_rollouts", main)
