"""How long the demo's phases take: this tree at its defaults against an earlier tree (or thread count), in one run.

Each configuration runs in its own process (so that its thread count and OpenMP wait policy are its own), on the
demo's tiny model built from seed 0: the format warm-up (``--sft-steps`` supervised steps of 64 answers), then
``--steps`` GRPO steps of 16 prompts x 8 samples from the warmed-up weights (dynamic sampling off, so that every
step generates and trains the same amount), then one greedy pass over the 1,000 held-out rows. It prints, per
configuration, the median GRPO step split into generation / scoring / training, the warm-up's seconds per step and
the held-out pass, each as wall time and as the process's CPU time, and the ratio of each to the first baseline.
Configurations alternate run by run (``--runs``), so that a busy machine slows them alike; the figures are medians
over the runs (and, for a step, over its steps after the first two).

    python benchmarks/demo_speed.py [--baseline-src DIR] [--baseline-threads 2] [--runs 3] [--steps 10]
                                    [--sft-steps 20]

``--policy DIR`` (a demo run's ``policy/``) starts the GRPO steps from a trained policy, as late in a run, when a
group's samples repeat one another (what the shared decoding and the update's repeats-run-once save on). ``--threads``
lists this tree's thread counts (default 1 2).

``--baseline-src DIR`` is another checkout's ``src`` (e.g. ``git worktree add /tmp/before <commit>``), run at
``--baseline-threads`` (default 2, the demo's default until it moved to one thread); each tree builds its own demo
model shape. Without it the baseline is this tree at one thread, the demo's default. It also times one generation of
48 prompts x 8 samples (what dynamic sampling draws late in a run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"


def worker(threads: int, steps: int, sft_steps: int, policy: str = "") -> dict[str, float]:
    import dataclasses

    import torch

    torch.set_num_threads(threads)
    from proofgym.policies import build_tiny_model
    from proofgym.training import (CompactGRPO, DemoSettings, demo_completion, demo_rows, demo_run_config,
                                   evaluate_heldout, sft_warmup)

    torch.manual_seed(0)
    rows = demo_rows(0, 2000)
    heldout = demo_rows(1_000_000, 1000)
    shape = getattr(DemoSettings(), "model", None)  # the demo's model shape (an earlier tree: the default one)
    with tempfile.TemporaryDirectory() as cache:
        model, tokenizer = build_tiny_model(cache, seed=0, **({"config": shape} if shape is not None else {}))
    pairs = [(r["prompt"], demo_completion(r["gold"] if i % 2 else "permit", r["source_facts"]))
             for i, r in enumerate(rows)]
    wall, cpu = time.perf_counter(), time.process_time()
    sft_warmup(model, tokenizer, pairs, config=dataclasses.replace(DemoSettings().sft, steps=sft_steps))
    out = {"sft_step_s": (time.perf_counter() - wall) / sft_steps,
           "sft_step_cpu_s": (time.process_time() - cpu) / sft_steps}
    if policy:  # GRPO from a trained policy: late in a run, when a group's samples repeat one another
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model, tokenizer = AutoModelForCausalLM.from_pretrained(policy), AutoTokenizer.from_pretrained(policy)
    reward_fn = demo_run_config().reward_function()
    config = dataclasses.replace(DemoSettings().grpo, dynamic_sampling=False)
    loop = CompactGRPO(model, tokenizer, reward_fn, rows, config=config, seed=0)
    metrics = []
    for _ in range(steps):
        cpu = time.process_time()
        m = loop.step().metrics
        m["step_cpu_s"] = time.process_time() - cpu
        metrics.append(m)
    for key in ("step_s", "step_cpu_s", "generate_s", "score_s", "train_s"):
        out[key] = statistics.median(m[key] for m in metrics[2:])
    # Late in a run dynamic sampling draws up to 48 prompts a step: one generation of 48 x 8 samples.
    from proofgym.training import generate

    late = []
    for _ in range(3):
        wall = time.perf_counter()
        generate(model, tokenizer, [r["prompt"] for r in rows[:48]], num_samples=8,
                 max_new_tokens=config.max_new_tokens)
        late.append(time.perf_counter() - wall)
    out["generate_48_s"] = statistics.median(late)
    wall, cpu = time.perf_counter(), time.process_time()
    evaluate_heldout(model, tokenizer, heldout, reward_fn, batch_size=250, max_new_tokens=config.max_new_tokens)
    out["heldout_s"], out["heldout_cpu_s"] = time.perf_counter() - wall, time.process_time() - cpu
    reward_fn.close()
    return out


def run_config(src: Path, threads: int, args: argparse.Namespace) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_WAIT_POLICY": "PASSIVE" if threads > 1 else "ACTIVE"}
    done = subprocess.run([sys.executable, __file__, "--worker", str(threads), str(args.steps), str(args.sft_steps),
                           *(["--policy", str(args.policy)] if args.policy else [])],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the run from {src} at {threads} thread(s) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src")
    parser.add_argument("--baseline-threads", type=int, default=2,
                        help="the baseline's torch threads (default 2, the demo's default until 1 thread)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--sft-steps", type=int, default=20)
    parser.add_argument("--policy", type=Path, default=None,
                        help="a trained demo policy (a demo run's policy/): the GRPO steps start from it")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="this tree's thread counts")
    parser.add_argument("--worker", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, policy=str(args.policy or ""))))
        return
    configs = {f"this tree, {n} thread{'s' if n > 1 else ''}{' (demo default)' if n == 1 else ''}": (HERE, n)
               for n in args.threads}
    if args.baseline_src:
        threads = args.baseline_threads
        configs = {f"baseline {args.baseline_src}, {threads} thread(s)": (args.baseline_src.resolve(), threads),
                   **configs}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    for run in range(args.runs):
        for name, (src, threads) in configs.items():
            results[name].append(run_config(src, threads, args))
            print(f"run {run + 1}/{args.runs} {name}: step {results[name][-1]['step_s']:.2f} s", file=sys.stderr)
    medians = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in results.items()}
    base = next(iter(medians.values()))
    print(f"demo phases, tiny model, 16 prompts x 8 samples, median of {args.runs} runs x {args.steps - 2} steps; "
          f"wall (CPU) seconds; ratio to the first row; GRPO from "
          f"{args.policy if args.policy else 'the warmed-up model'}; load average {os.getloadavg()[0]:.1f}")
    for name, m in medians.items():
        print(f"  {name}")
        print(f"    GRPO step {m['step_s']:.3f} s ({m['step_cpu_s']:.3f} CPU) = generate {m['generate_s']:.3f} + score "
              f"{m['score_s']:.4f} + train {m['train_s']:.3f}   x{m['step_s'] / base['step_s']:.2f}, CPU "
              f"x{m['step_cpu_s'] / base['step_cpu_s']:.2f} "
              f"(train x{m['train_s'] / base['train_s']:.2f}, generate x{m['generate_s'] / base['generate_s']:.2f})")
        print(f"    one generation of 48 prompts x 8 (late in a run) {m['generate_48_s']:.3f} s   "
              f"x{m['generate_48_s'] / base['generate_48_s']:.2f}")
        print(f"    warm-up step {m['sft_step_s']:.3f} s ({m['sft_step_cpu_s']:.3f} CPU)   "
              f"x{m['sft_step_s'] / base['sft_step_s']:.2f};  held-out pass {m['heldout_s']:.2f} s "
              f"({m['heldout_cpu_s']:.2f} CPU)   x{m['heldout_s'] / base['heldout_s']:.2f}")


if __name__ == "__main__":
    from _record import record

    record("demo_speed", main)
