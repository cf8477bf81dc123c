"""CPU-seconds of whole demo runs to PASSED, per seed, on this processor's own kernels and on AVX2-only ones.

Runs ``proofgym demo --seed N`` to its end (early stop included) for every seed of ``--seeds``, each in its own
process, and reads the child's CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``): the issue's goal
is <= 200 CPU-s to PASSED on seeds 0-4 and 7-8, on AVX-512 and on AVX2-only processors alike. ``--isa avx2`` runs
torch's CPU kernels as on an AVX2-only processor (``ATEN_CPU_CAPABILITY=avx2``, oneDNN and MKL capped the same way):
another instruction set rounds differently, so the run follows another trajectory, and its kernels are slower, as
on an AMD EPYC of the Zen 2 family. It is an emulation, not the other processor: say which you quote.

``--baseline-src DIR`` (another checkout's ``src``, e.g. ``git worktree add /tmp/base <commit>``) runs the same
seeds on that tree too, alternating run by run, and prints each seed's CPU-s ratio (this tree / baseline). Runs go
``--jobs`` at a time (default 1: each demo uses one torch thread and its trace writer; two at a time on a 2-core
machine share the caches, which costs each a little CPU time). Printed per run: passed, steps run (goal held from),
worst branch at the end, CPU-s, wall, peak RSS; then per configuration the median, the maximum and how many seeds
passed within ``--budget`` CPU-s (default 200).

    python benchmarks/demo_seeds.py [--seeds 0-4,7,8] [--isa native|avx2|both] [--baseline-src DIR] [--jobs 1]
    python benchmarks/demo_seeds.py --domain housing --seeds 0 --isa native   (a domain folder's demo)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import processor  # noqa: E402  (benchmarks/_machine.py)

HERE = Path(__file__).resolve().parent.parent
AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "DNNL_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def worst_branch(per_branch: dict[str, list[int]]) -> float:
    """The lowest share right among the rule branches (``{branch: [correct, total]}``) that have rows."""
    return min(correct / total for correct, total in per_branch.values() if total)


def run_cli(src: Path, argv: list[str], *, isa: str = "native") -> dict[str, float]:
    """``proofgym <argv>`` in a child process on the tree ``src``: its CPU-s (user + system, the child's own and its
    children's), wall and peak RSS. Exits with the child's error output when it fails."""
    env = dict(os.environ, PYTHONPATH=str(src), OMP_WAIT_POLICY="PASSIVE")
    if isa == "avx2":
        env.update(AVX2)
    code = ("import sys, resource, time, json; t = time.perf_counter(); from proofgym.cli import main\n"
            "sys.argv[0] = 'proofgym'\ntry:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "else:\n    code = 0\n"
            "u, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print('CPU_JSON', json.dumps({'cpu_s': u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime,"
            " 'wall_s': time.perf_counter() - t, 'rss_mb': u.ru_maxrss / 1024, 'status': code}))")
    done = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True)
    figures = next((json.loads(line.split(" ", 1)[1]) for line in done.stdout.splitlines()
                    if line.startswith("CPU_JSON ")), None)
    if done.returncode != 0 or figures is None or figures.pop("status") not in (0, None):
        raise SystemExit(f"proofgym {' '.join(argv)} ({isa}) failed with status {done.returncode}:\n"
                         f"{done.stdout[-1500:]}\n{done.stderr[-2000:]}")
    return figures


def run_one(src: Path, seed: int, isa: str, out: Path, domain: Path | None = None) -> dict[str, object]:
    """One demo run in a child process (on ``domain``, a domain folder, if given): its summary and its CPU-s, wall
    and peak RSS."""
    figures = run_cli(src, ["demo", "--seed", str(seed), "--out", str(out),
                            *(["--domain", str(domain)] if domain else [])], isa=isa)
    summary = json.loads((out / "summary.json").read_text())
    worst = worst_branch(summary["heldout"]["trained"]["per_branch"])
    return {"seed": seed, "isa": isa, "passed": summary["passed"], "steps": summary["steps"],
            "held_from": summary.get("goal_held_from"), "worst": worst, **figures}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0-4,7,8")
    parser.add_argument("--isa", choices=("native", "avx2", "both"), default="both")
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=float, default=200.0)
    parser.add_argument("--domain", type=Path, default=None,
                        help="a domain folder (proofgym domain init): its demo instead of the grant rules")
    args = parser.parse_args()
    if args.domain is not None and not (args.domain / "rulebook.yaml").is_file():
        parser.error(f"--domain {args.domain}: expected a domain folder with a rulebook.yaml (proofgym domain init)")
    return args


def main(args: argparse.Namespace) -> None:
    seeds = parse_seeds(args.seeds)
    isas = ["native", "avx2"] if args.isa == "both" else [args.isa]
    trees = [("this tree", HERE / "src")] + ([("baseline", args.baseline_src.resolve())] if args.baseline_src else [])
    jobs = [(name, src, seed, isa) for seed in seeds for isa in isas for name, src in trees]
    print(f"processor: {processor()}, {os.cpu_count()} CPUs; {len(jobs)} demo runs"
          f"{f' on the domain folder {args.domain.name}' if args.domain else ''}, {args.jobs} at a time; "
          f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [(job, pool.submit(run_one, job[1], job[2], job[3], Path(tmp) / f"{i}", args.domain))
                   for i, job in enumerate(jobs)]
        results: dict[tuple[str, str], list[dict[str, object]]] = {}
        for (name, _, seed, isa), future in futures:
            r = future.result()
            results.setdefault((name, isa), []).append(r)
            print(f"{name:9} {isa:6} seed {seed}: {'PASSED' if r['passed'] else 'FAILED'} after {r['steps']} steps "
                  f"(goal held from {r['held_from']}), worst branch {r['worst']:.1%}, {r['cpu_s']:.0f} CPU-s, "
                  f"{r['wall_s']:.0f} s wall, peak RSS {r['rss_mb']:.0f} MiB", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for (name, isa), rows in results.items():
        cpu = [float(r["cpu_s"]) for r in rows]  # type: ignore[arg-type]
        within = sum(bool(r["passed"]) and float(r["cpu_s"]) <= args.budget for r in rows)  # type: ignore[arg-type]
        print(f"{name:9} {isa:6}: CPU-s median {statistics.median(cpu):.0f}, max {max(cpu):.0f}; "
              f"{within}/{len(rows)} seeds PASSED within {args.budget:.0f} CPU-s")
        if name != "baseline" and ("baseline", isa) in results:
            base = {r["seed"]: float(r["cpu_s"]) for r in results[("baseline", isa)]}  # type: ignore[arg-type]
            ratios = [float(r["cpu_s"]) / base[r["seed"]] for r in rows]  # type: ignore[arg-type]
            print(f"{'':9} {isa:6}: CPU-s against the baseline, per seed: "
                  + ", ".join(f"{r['seed']}: x{q:.2f}" for r, q in zip(rows, ratios))
                  + f" (median x{statistics.median(ratios):.2f})")


if __name__ == "__main__":
    from _record import record

    arguments = parse()
    if arguments.domain is None:
        record("demo_seeds", lambda: main(arguments))
    else:  # a results file of its own per domain
        record(f"demo_seeds-{arguments.domain.resolve().name}", lambda: main(arguments))
