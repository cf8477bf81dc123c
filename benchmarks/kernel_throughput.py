"""Embedded rule kernel throughput on one core, per shipped domain.

For each domain, on ``--n`` distinct generated records (one claim each), verified in steps of ``--batch`` claims
whose results are dropped after each step (as a trainer does), it prints:
- certified verifications per second through ``RuleKernel.query`` (gate + engine + proof + proof check + report);
- the same without the proof check, and the checker's share of the time;
- the same claims through ``VerificationRuntime`` (cache off, in-process, batches of ``--batch``) wrapping
  ``RulebookVerifier``, and the runtime's overhead over the bare verifier.
Each figure is the median of ``--runs`` runs (wall clock; the first line also gives the rate in CPU time of this
process, which other load on a shared machine disturbs less). Goal: >= 20,000/s for grant_eligibility and
>= 5,000/s for loan, with the runtime adding under 20 %.

    python benchmarks/kernel_throughput.py [--n 20000] [--runs 5] [--domain grant_eligibility]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

from proofgym import Claim, Outcome
from proofgym.domains import domain_names, get_domain
from proofgym.rules import RuleKernel, load_rulebook
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.domains import RulebookVerifier

GOALS = {"grant_eligibility": 20_000, "loan": 5_000}


def median_seconds(fn, runs: int, cpu: list[float] | None = None) -> float:
    """The median wall time of ``runs`` calls; the median CPU time is appended to ``cpu`` when given."""
    times, cpu_times = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - start_cpu)
    if cpu is not None:
        cpu.append(statistics.median(cpu_times))
    return statistics.median(times)


def bench_domain(name: str, n: int, runs: int, batch: int) -> None:
    domain = get_domain(name)
    rulebook = load_rulebook(domain.rulebook_path)
    records = domain.generate(seed=1, n=n)
    facts = [record.facts for record in records]
    checked, unchecked = RuleKernel(rulebook), RuleKernel(rulebook, check=False)
    verifier = RulebookVerifier(checked)
    claims = [Claim(None, f) for f in facts]

    certified = sum(r["status"] == "decided" and r["proof_checked"] for r in map(checked.query, facts))
    fact_steps = [facts[i:i + batch] for i in range(0, n, batch)]
    claim_steps = [claims[i:i + batch] for i in range(0, n, batch)]

    def per_step(fn, steps):
        return lambda: [len([fn(item) for item in step]) for step in steps]

    cpu: list[float] = []
    t_kernel = median_seconds(per_step(checked.query, fact_steps), runs, cpu)
    # Long-running services freeze their start-up objects so the collector stops rescanning them; here
    # that is the 10k generated records and the loaded modules. The kernel's own work is unchanged.
    gc.freeze()
    t_frozen = median_seconds(per_step(checked.query, fact_steps), runs)
    gc.unfreeze()
    t_nocheck = median_seconds(per_step(unchecked.query, fact_steps), runs)
    t_verifier = median_seconds(per_step(verifier.verify, claim_steps), runs)
    config = RuntimeConfig(cache_size=0, batch_size=batch, max_concurrency=1, timeout_s=600)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync(claims)
        assert sum(v.outcome is Outcome.CERTIFIED for v in verdicts) == certified
        del verdicts
        t_runtime = median_seconds(lambda: [len(runtime.verify_many_sync(step)) for step in claim_steps], runs)

    rate = n / t_kernel
    goal = GOALS.get(name)
    print(f"{name}: {n} distinct records, {certified} certified ({certified / n:.0%}), "
          f"{len(rulebook.derive_rules) + len(rulebook.constraints) + len(rulebook.decision_rules)} rules")
    print(f"  kernel incl. proof check   {rate:>10,.0f} /s   {t_kernel / n * 1e6:7.1f} us each"
          + (f"   goal {goal:,}/s: {'met' if rate >= goal else 'MISSED'} ({rate / goal:.2f}x)" if goal else "")
          + f"   ({n / cpu[0]:,.0f} /s of CPU time)")
    print(f"  same, setup gc.freeze()d   {n / t_frozen:>10,.0f} /s   {t_frozen / n * 1e6:7.1f} us each"
          + (f"   goal {goal:,}/s: {'met' if n / t_frozen >= goal else 'MISSED'}" if goal else ""))
    print(f"  kernel without the check   {n / t_nocheck:>10,.0f} /s   {t_nocheck / n * 1e6:7.1f} us each"
          f"   checker share {(t_kernel - t_nocheck) / t_kernel:.0%}")
    print(f"  RulebookVerifier (verdicts) {n / t_verifier:>9,.0f} /s   {t_verifier / n * 1e6:7.1f} us each")
    overhead = t_runtime / t_verifier - 1
    print(f"  through the runtime        {n / t_runtime:>10,.0f} /s   {t_runtime / n * 1e6:7.1f} us each"
          f"   runtime overhead {overhead:+.0%} (goal < 20 %: {'met' if overhead < 0.2 else 'MISSED'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="distinct records per domain")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median is printed)")
    parser.add_argument("--batch", type=int, default=256, help="claims per step (and per verifier call)")
    parser.add_argument("--domain", action="append", help="domain(s) to run (default: all shipped)")
    args = parser.parse_args()
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # every thread of this process, the runtime's loop included, on one core
    print(f"pinned to core {core}; median of {args.runs} runs\n")
    for name in args.domain or domain_names():
        bench_domain(name, args.n, args.runs, args.batch)
        print()


if __name__ == "__main__":
    from _record import record

    record("kernel_throughput", main)
