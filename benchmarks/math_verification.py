"""Math verification throughput, and false timeouts under a burst.

Claims are the shipped problems' gold answers (rewritten: ``\\boxed`` stripped, ``$`` dropped) and perturbed
answers, all distinct, with the verdict cache off, so every claim is a real Math-Verify parse + compare.

Rows (verifications per second, median of ``--runs`` runs, each after a warm-up so workers are started):
  (a) in-process: one thread calling ``MathVerifier.verify`` in a loop, Math-Verify's timeouts off (the baseline;
      nothing can stop a hang here);
  (b) the runtime's process pool (``--workers`` workers, batches of 8): the wall clock enforced by killing a worker;
  (c) the runtime's Ray executor on a local Ray (``--workers`` actors), when Ray and the executor are installed.

False timeouts: ``--burst`` threads call one reward function at once (the shipped ``configs/run/math.yaml`` path,
``timeout_s`` 20 s, a cold pool: start-up included), each scoring ``--per-caller`` gold answers; then the same on a
warm pool with ``--warm-per-caller`` answers each, ``--runs`` times. A false
timeout is a timeout verdict on an answer that verifies in milliseconds alone; the goal is 0.

    python benchmarks/math_verification.py [--runs 3] [--claims 96] [--workers 2] [--burst 16] [--no-ray]
"""

from __future__ import annotations

import argparse
import re
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from proofgym.config import load_run_config
from proofgym.core import Claim
from proofgym.math import MathVerifier, build_math_prompt, builtin_math_problems, math_claim
from proofgym.runtime import RuntimeConfig, VerificationRuntime

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "run" / "math.yaml"


def _not_a_rate(invalid: int) -> str:
    """What a row whose verifications came back invalid is: not a throughput (nothing was verified)."""
    return f"  NOT A RATE: {invalid} verifications invalid (nothing verified them)" if invalid else ""


def _perturbed(gold: str) -> str:
    text = gold.strip().strip("$")
    match = re.search(r"-?\d+", text)
    return text[: match.start()] + str(int(match.group(0)) + 1) + text[match.end():] if match else text + "+1"


def make_claims(n: int) -> list[Claim]:
    problems = list(builtin_math_problems().values())
    claims = []
    for i in range(n):
        problem = problems[i % len(problems)]
        gold = problem.answer
        answer = gold.strip("$") if i % 2 == 0 else _perturbed(gold)
        claims.append(math_claim(gold, answer + " " * (i // len(problems))))  # distinct texts, same values
    return claims


def in_process(claims: list[Claim], runs: int) -> tuple[float, int]:
    verifier = MathVerifier()
    for claim in claims:  # warm: imports, and each gold answer parsed once (the cache a worker also builds)
        verifier.verify(claim)
    rates, certified = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        verdicts = [verifier.verify(claim) for claim in claims]
        rates.append(len(claims) / (time.perf_counter() - start))
        certified = sum(v.certified for v in verdicts)
    return statistics.median(rates), certified


def through_runtime(config: RuntimeConfig, claims: list[Claim], runs: int) -> tuple[float, int, int, float]:
    with VerificationRuntime(MathVerifier(), config) as runtime:
        start = time.perf_counter()
        runtime.verify_many_sync(claims)  # warm-up: workers start, gold answers parsed
        cold = time.perf_counter() - start
        rates, certified, invalid = [], 0, 0
        for _ in range(runs):
            start = time.perf_counter()
            verdicts = runtime.verify_many_sync(claims)
            rates.append(len(claims) / (time.perf_counter() - start))
            certified = sum(v.certified for v in verdicts)
            invalid = sum(v.invalid for v in verdicts)
    return statistics.median(rates), certified, invalid, cold


def burst(reward_fn, callers: int, per_caller: int, offset: int) -> tuple[int, int, int, float]:
    """``callers`` threads score ``per_caller`` gold answers each, all at once: (items, timeouts, not top, s)."""
    problems = list(builtin_math_problems().values())
    top = reward_fn.shaper.bounds[1]
    barrier = threading.Barrier(callers)

    def call(index: int):
        group = [problems[(offset + index * per_caller + j) % len(problems)] for j in range(per_caller)]
        barrier.wait()
        return reward_fn.score([build_math_prompt(p) for p in group],
                               [f"\\boxed{{{p.answer.strip('$')}}} " + " " * (offset + index) for p in group])

    start = time.perf_counter()
    with ThreadPoolExecutor(callers) as pool:
        items = [item for batch in pool.map(call, range(callers)) for item in batch]
    elapsed = time.perf_counter() - start
    timeouts = sum(1 for item in items if item.verdict is not None and item.verdict.error_kind is not None
                   and item.verdict.error_kind.value == "timeout")
    not_top = sum(1 for item in items if item.reward is None or abs(item.reward - top) > 1e-9)
    return len(items), timeouts, not_top, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--claims", type=int, default=96)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--burst", type=int, default=16)
    parser.add_argument("--per-caller", type=int, default=4)
    parser.add_argument("--warm-per-caller", type=int, default=32)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()

    claims = make_claims(args.claims)
    print(f"{args.claims} distinct claims (half gold, half perturbed), cache off, median of {args.runs} runs\n")
    base, certified = in_process(claims, args.runs)
    print(f"(a) in-process, one thread, timeouts off   {base:8.1f} verifications/s   x1.00   "
          f"({certified} certified)")
    pool = RuntimeConfig(executor="process", workers=args.workers, max_concurrency=args.workers, batch_size=8,
                         timeout_s=60.0, cache_size=0)
    rate, certified, invalid, cold = through_runtime(pool, claims, args.runs)
    print(f"(b) process pool, {args.workers} workers, batches of 8    {rate:8.1f} verifications/s   "
          f"x{rate / base:.2f}   ({certified} certified, {invalid} invalid; cold start {cold:.1f} s)"
          + _not_a_rate(invalid))
    if not args.no_ray:
        try:
            import ray  # noqa: F401
            from proofgym.runtime import RayConfig

            ray_config = RuntimeConfig(executor="ray", workers=args.workers, max_concurrency=args.workers,
                                       batch_size=8, timeout_s=60.0, cache_size=0, ray=RayConfig(mode="actors"))
            rate, certified, invalid, cold = through_runtime(ray_config, claims, args.runs)
            print(f"(c) Ray, local, {args.workers} actors, batches of 8     {rate:8.1f} verifications/s   "
                  f"x{rate / base:.2f}   ({certified} certified, {invalid} invalid; cold start {cold:.1f} s)"
                  + _not_a_rate(invalid))
        except Exception as exc:  # noqa: BLE001 - an optional row
            print(f"(c) Ray: not measured ({type(exc).__name__}: {str(exc)[:120]})")

    print(f"\nfalse timeouts, {args.burst} callers at once, shipped config ({CONFIG.name}):")
    with load_run_config(CONFIG).reward_function() as reward_fn:
        limit = reward_fn.runtime.config.timeout_s
        items, timeouts, not_top, elapsed = burst(reward_fn, args.burst, args.per_caller, 0)
        print(f"  cold pool, {args.per_caller} gold answers per caller: {timeouts}/{items} timed out "
              f"({timeouts / items:.1%}), {not_top} not paid the top reward; burst {elapsed:.1f} s, "
              f"timeout_s {limit:g}")
        totals, walls = [0, 0, 0], []
        for run_index in range(args.runs):
            items, timeouts, not_top, elapsed = burst(reward_fn, args.burst, args.warm_per_caller,
                                                      1000 * (run_index + 1))
            totals = [totals[0] + items, totals[1] + timeouts, totals[2] + not_top]
            walls.append(elapsed)
        print(f"  warm pool, {args.warm_per_caller} gold answers per caller, {args.runs} bursts: "
              f"{totals[1]}/{totals[0]} "
              f"timed out ({totals[1] / totals[0]:.1%}), {totals[2]} not paid the top reward; longest burst "
              f"{max(walls):.1f} s, timeout_s {limit:g}")


if __name__ == "__main__":
    from _record import record

    record("math_verification", main)
