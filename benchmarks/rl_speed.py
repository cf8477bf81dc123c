"""Where a multi-step RL run's time goes, alone and with CPU-bound processes beside it, measured in one run.

Runs ``proofgym train --config configs/rl/fact_finding_tiny.toml --steps N`` (the real command, in a child process,
so that OpenMP's wait policy is read fresh) once alone and once with ``--burners`` CPU-bound processes
(``while True: pass``) beside it, and prints each run's phases (set-up, format warm-up, waiting for rollouts,
judging, update, weight sync, held-out evaluation, checkpoints; the trainer's ``summary.json`` ``phases_s``), its
wall and CPU seconds (the trainer and its task app) and the ratio loaded / alone of each. With ``--before`` the
same pair also runs with the settings this config had before (torch's default threads, OpenMP's default waiting,
``training.overlap_rollouts`` off; the code is today's in both, the shared-prompt update included) and the ratio
before / now is printed for both. With ``--baseline-src DIR`` (the ``src`` folder of another checkout, e.g.
``git worktree add /tmp/base <commit>`` then ``/tmp/base/src``) the same pair also runs that code (on
``PYTHONPATH``, this config), alone and loaded interleaved with today's (baseline alone, now alone, baseline loaded,
now loaded), and baseline / now is printed: the code's gain measured in one run, under the same background load.

    python benchmarks/rl_speed.py [--steps 10] [--seed 0] [--burners 2] [--before] [--baseline-src DIR]
                                  [--config PATH]

A run of ``--steps`` iterations with ``evaluation.every_n_iters = 5`` makes ``--steps / 5 + 1`` evaluations, so
phases per iteration are comparable between runs of the same ``--steps``. Say what else ran on the machine.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)

CONFIG = Path(__file__).parents[1] / "configs" / "rl" / "fact_finding_tiny.toml"
PHASES = ("setup", "warmup", "rollout", "judge", "update", "sync", "overlap_wait", "evaluation", "checkpoint")


def before_config(config: Path, folder: Path) -> Path:
    """``config`` with the settings it had before issue 42: no ``cpu_threads``, ``overlap_rollouts = false``."""
    text = config.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^cpu_threads\s*=.*\n", "", text)
    text = re.sub(r"(?m)^overlap_rollouts\s*=.*\n", "", text)
    text = text.replace("[training]\n", "[training]\noverlap_rollouts = false\n", 1)
    path = folder / f"before-{config.name}"
    path.write_text(text, encoding="utf-8")
    return path


def train(config: Path, *, steps: int, seed: int, output: Path, burners: int, before: bool,
          source: Path | None = None) -> dict[str, Any]:
    """One ``proofgym train`` run of ``steps`` iterations with ``burners`` busy processes beside it (``source``:
    the ``src`` folder whose proofgym runs, default the installed one)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), *filter(None, [env.get("PYTHONPATH")])])
    if before:
        env["OMP_WAIT_POLICY"] = ""  # OpenMP's default (prefer_passive_waiting leaves a set variable alone)
    else:
        env.pop("OMP_WAIT_POLICY", None)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(burners)]
    try:
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = subprocess.Popen([sys.executable, "-c", "from proofgym.cli import main; main()", "train", "--config",
                                str(config), "--seed", str(seed), "--steps", str(steps), "--output-dir", str(output)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = run.communicate()
        finally:
            if run.poll() is None:  # stopped from outside: the run checkpoints and closes its task app
                run.terminate()
                run.wait()
        wall = time.perf_counter() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    if run.returncode != 0:
        raise SystemExit(f"proofgym train exited with {run.returncode}:\n{out[-3000:]}")
    summary = json.loads((output / "summary.json").read_text(encoding="utf-8"))
    rows = list(csv.DictReader((output / "metrics.csv").open(encoding="utf-8")))
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    steps_s = [float(row["step_s"]) for row in rows if row.get("step_s")]
    return {"wall_s": wall, "cpu_s": cpu, "phases": summary.get("phases_s", {}), "iterations": summary["iterations"],
            "step_median_s": statistics.median(steps_s) if steps_s else float("nan"),
            "eval_after": summary.get("eval_after")}


def show(label: str, alone: dict[str, Any], loaded: dict[str, Any], burners: int) -> None:
    print(f"\n{label}: {alone['iterations']} iterations each; seconds alone | with {burners} burners | ratio")
    for phase in PHASES:
        a, b = alone["phases"].get(phase, 0.0), loaded["phases"].get(phase, 0.0)
        if a or b:
            print(f"  {phase:<13}{a:8.1f} |{b:8.1f} |  x{b / a if a else float('nan'):.2f}")
    for key, name in (("step_median_s", "median iteration"), ("wall_s", "wall"), ("cpu_s", "CPU")):
        a, b = alone[key], loaded[key]
        print(f"  {name:<17}{a:8.1f} |{b:8.1f} |  x{b / a:.2f}")


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(f"stopped by signal {signum}")  # the burners and the run are then stopped on the way out


def main() -> None:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--before", action="store_true", help="also run the settings before issue 42")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="also run the proofgym package of this src folder (another checkout), interleaved")
    args = parser.parse_args()
    if args.steps < 1 or args.burners < 0:
        raise SystemExit(f"--steps must be at least 1 and --burners at least 0, got {args.steps} and {args.burners}")
    if args.baseline_src is not None and not (args.baseline_src / "proofgym" / "__init__.py").is_file():
        raise SystemExit(f"--baseline-src {args.baseline_src}: expected the src folder of a proofgym checkout "
                         "(holding proofgym/__init__.py)")
    print(f"{processor()}, {os.cpu_count()} CPUs; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
          f"load average before: "
          f"{os.getloadavg()[0]:.2f}; {args.config.name}, seed {args.seed}, {args.steps} iterations")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        settings: list[tuple[str, Path, bool, Path | None]] = [("now", args.config, False, None)]
        if args.before:
            settings.append(("before", before_config(args.config, root), True, None))
        if args.baseline_src is not None:
            settings.insert(0, ("baseline", args.config, False, args.baseline_src.resolve()))
        results = {}

        def run(name: str, config: Path, before: bool, source: Path | None, burners: int) -> None:
            output = root / f"{name}-{burners}"
            results[name, burners] = r = train(config, steps=args.steps, seed=args.seed, output=output,
                                               burners=burners, before=before, source=source)
            print(f"{name}, {burners} burners: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU-s, warm-up "
                  f"{r['phases'].get('warmup', 0.0):.1f} s, held-out {r['eval_after']}, load average now "
                  f"{os.getloadavg()[0]:.2f}", flush=True)

        if args.baseline_src is not None:  # interleaved: baseline and today's code under the same load
            for burners in (0, args.burners):
                for name, config, before, source in settings[:2]:
                    run(name, config, before, source, burners)
            settings, compared = settings[2:], settings[:2]
            for name, *_ in compared:
                show(name, results[name, 0], results[name, args.burners], args.burners)
            for burners in (0, args.burners):
                old, new = results["baseline", burners], results["now", burners]
                phases = ", ".join(f"{phase} x{old['phases'].get(phase, 0) / new['phases'][phase]:.2f}"
                                   for phase in ("rollout", "evaluation", "update") if new["phases"].get(phase))
                print(f"\nbaseline / now with {burners} burners: wall x{old['wall_s'] / new['wall_s']:.2f}, CPU "
                      f"x{old['cpu_s'] / new['cpu_s']:.2f}, {phases}")
            ratio = {name: results[name, args.burners]["wall_s"] / results[name, 0]["wall_s"] for name in
                     ("baseline", "now")}
            print(f"loaded / alone wall: baseline x{ratio['baseline']:.2f}, now x{ratio['now']:.2f}")
        for name, config, before, source in settings:
            for burners in (0, args.burners):
                run(name, config, before, source, burners)
            show(name, results[name, 0], results[name, args.burners], args.burners)
        if args.before:
            for burners in (0, args.burners):
                old, new = results["before", burners], results["now", burners]
                print(f"\nbefore / now with {burners} burners: wall x{old['wall_s'] / new['wall_s']:.2f}, warm-up "
                      f"x{old['phases'].get('warmup', 0) / max(new['phases'].get('warmup', 0), 1e-9):.2f}, "
                      f"median iteration x{old['step_median_s'] / new['step_median_s']:.2f}")


if __name__ == "__main__":
    from _record import record

    record("rl_speed", main)
