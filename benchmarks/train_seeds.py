"""Whole `proofgym train` runs to their goal, per seed: the TRL path (`configs/run/train_grant_tiny.yaml`) or
multi-step RL (`configs/rl/fact_finding_tiny.toml`), each seed in its own process, with its CPU-seconds.

``--run trl``: the config as shipped but for ``training.seed`` (and the output folder); the goal is 95 % of the
held-out decisions right on every rule branch (the run stops early once every branch reads 97 % twice in a row).
Printed per seed: reached or not, updates run (held-out stop or all), the worst branch at the end, the held-out
accuracy before -> after, CPU-s, wall, peak RSS. ``--run rl``: ``proofgym train --seed N`` on the RL config; the goal
is the config's stop rule (two held-out evaluations in a row at ``stop_at`` and a confirmation on fresh seeds).
Printed per seed: stopped or not, at which iteration, held-out success before -> at the stop, the confirmation,
CPU-s (the trainer and its task app), wall, the format warm-up's seconds. Then the median and maximum CPU-s and how
many seeds reached the goal. Runs go ``--jobs`` at a time (two on 2 cores share the caches; say so).

    python benchmarks/train_seeds.py --run trl [--seeds 0-9] [--jobs 1]
    python benchmarks/train_seeds.py --run rl [--seeds 0-2] [--jobs 1]

Each ``--run`` records its own results file (``train_seeds-trl``, ``train_seeds-rl``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)
from demo_seeds import parse_seeds, run_cli, worst_branch  # noqa: E402  (one child runner for every whole-run benchmark)

HERE = Path(__file__).resolve().parent.parent
CONFIGS = {"trl": HERE / "configs" / "run" / "train_grant_tiny.yaml",
           "rl": HERE / "configs" / "rl" / "fact_finding_tiny.toml"}
GOAL = 0.95


def run_trl(seed: int, out: Path) -> dict[str, Any]:
    config = yaml.safe_load(CONFIGS["trl"].read_text(encoding="utf-8"))
    config["training"]["seed"] = seed
    config["training"]["output_dir"] = str(out)
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    figures = run_cli(HERE / "src", ["train", "--config", str(path)])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    after, before = summary["heldout_after"], summary["heldout_before"]
    worst = worst_branch(after["per_branch"])
    during = summary.get("heldout_during") or []
    updates = during[-1]["step"] if during else None  # the held-out passes come every `heldout.every` updates
    return {"seed": seed, "reached": worst >= GOAL,
            "what": (f"stopped by the held-out rule at update {updates}" if summary.get("stopped_early")
                     else f"ran every update (last held-out pass at update {updates})"),
            "worst": f"worst branch {worst:.1%}",
            "accuracy": f"held-out {before['accuracy']:.1%} -> {after['accuracy']:.1%}", **figures}


def run_rl(seed: int, out: Path) -> dict[str, Any]:
    figures = run_cli(HERE / "src", ["train", "--config", str(CONFIGS["rl"]), "--seed", str(seed),
                                     "--output-dir", str(out)])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    reached = summary.get("reached_at")
    confirmation = (summary.get("confirmation") or {}).get("success")
    after = summary.get("eval_after")
    warmup = (summary.get("phases_s") or {}).get("warmup")
    return {"seed": seed, "reached": reached is not None,
            "what": (f"stop rule met at iteration {reached}" if reached is not None
                     else f"not met in {summary['iterations']} iterations"),
            "worst": "confirmation " + ("-" if confirmation is None else f"{confirmation:.1%}"),
            "accuracy": f"held-out {summary['eval_before']:.1%} -> " + ("-" if after is None else f"{after:.1%}")
                        + ("" if warmup is None else f", warm-up {warmup:.0f} s"),
            **figures}


def main(args: argparse.Namespace) -> None:
    seeds = parse_seeds(args.seeds)
    one = run_trl if args.run == "trl" else run_rl
    print(f"processor: {processor()}, {os.cpu_count()} CPUs; {len(seeds)} runs of {CONFIGS[args.run].relative_to(HERE)}"
          f", {args.jobs} at a time; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(one, seed, Path(tmp) / f"seed{seed}") for seed in seeds]
        rows = []
        for future in futures:
            r = future.result()
            rows.append(r)
            print(f"seed {r['seed']}: {'REACHED' if r['reached'] else 'NOT REACHED'}, {r['what']}, {r['worst']}, "
                  f"{r['accuracy']}; {r['cpu_s']:.0f} CPU-s, {r['wall_s']:.0f} s wall, peak RSS {r['rss_mb']:.0f} MiB",
                  flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    cpu = [float(r["cpu_s"]) for r in rows]
    print(f"CPU-s median {statistics.median(cpu):.0f}, max {max(cpu):.0f}; "
          f"{sum(bool(r['reached']) for r in rows)}/{len(rows)} seeds reached the goal")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", choices=sorted(CONFIGS), required=True)
    parser.add_argument("--seeds", default=None, help="default: 0-9 (trl), 0-2 (rl)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    args.seeds = args.seeds or ("0-9" if args.run == "trl" else "0-2")
    return args


if __name__ == "__main__":
    from _record import record

    arguments = parse()
    record(f"train_seeds-{arguments.run}", lambda: main(arguments))
