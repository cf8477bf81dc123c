"""Verification throughput on each executor, and Ray's per-call overhead against the process pool, in one run.

Rows, every one through a fresh :class:`~proofgym.runtime.VerificationRuntime` (cache off), workers started
before the clock starts (a one-time cost of any run):

- ``kernel``: ``--kernel-n`` grant_eligibility claims, the embedded rule kernel (``RulebookVerifier``), in calls of
  ``--kernel-batch`` claims;
- ``verilog``: the sandboxed Verilog judge on ``--verilog-problems`` built-in problems x (reference, inverted
  output), one design per call (``recommended_runtime_config``'s batch size);
- ``no-op``: ``--calls`` calls of one claim to a verifier that does nothing, one call in flight: the per-call cost
  of the executor itself (the kernel and Verilog rows' work minus this is the verifier's).

on: ``in_process`` (the runtime's own loop; no isolation), ``process`` (``--workers`` worker processes), ``ray
1 node`` (a local head with ``--workers`` CPUs) and ``ray 2 nodes`` (head + a second node, ``--workers // 2`` CPUs
each: the same CPUs as one node, so this row measures the cost of spreading, not more hardware), both in
``actors`` mode, and ``ray tasks`` on the two nodes for the no-op row. The clusters are real ``ray start``
processes on loopback (the tests' helper, ``tests/_ray_cluster.py``). Each figure is the median of ``--runs`` runs.

    python benchmarks/ray_verification.py [--runs 3] [--workers 2] [--kernel-n 4000] [--verilog-problems 16]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from proofgym.core import Claim
from proofgym.domains import RulebookVerifier, get_domain
from proofgym.rules import RuleKernel, load_rulebook
from proofgym.runtime import RayConfig, RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _ray_cluster import LocalRayCluster  # noqa: E402  (the same real cluster the tests start)


def kernel_case(n: int, batch: int):
    domain = get_domain("grant_eligibility")
    verifier = RulebookVerifier(RuleKernel(load_rulebook(domain.rulebook_path)))
    claims = [Claim("permit" if i % 2 else "deny", dict(r.facts)) for i, r in enumerate(domain.generate(seed=1, n=n))]
    return verifier, claims, batch


def verilog_case(problems: int):
    from proofgym.verilog import VerilogVerifier, builtin_problems, design_claim

    chosen = dict(list(builtin_problems().items())[:problems])
    claims = []
    for problem in chosen.values():
        reference = re.sub(r"\bRefModule\b", "TopModule", problem.reference)
        wrong = reference.replace("endmodule", "  wire ;\nendmodule", 1)  # a design that does not compile
        claims += [design_claim(problem, reference), design_claim(problem, wrong)]
    verifier = VerilogVerifier(chosen)
    verifier.prepare(max_workers=2)  # reference sample counts found once, as a training run does
    return verifier, claims, 1


def measure(verifier, claims, batch: int, executor: dict, workers: int, runs: int, in_flight: int | None = None):
    """Median seconds to verify ``claims`` (and how many came back certified) on a warm runtime."""
    config = RuntimeConfig(cache_size=0, batch_size=batch, timeout_s=120, retries=0,
                           max_concurrency=in_flight or workers, **executor)
    walls, certified = [], 0
    with VerificationRuntime(verifier, config) as runtime:
        # Start every worker: one call per worker, distinct claims so that none is de-duplicated away; twice, a
        # little apart, for Ray's actors, which come up in the background and would each take the first call
        # that finds them (with the verifier sent along) inside the clock otherwise.
        for round in range(2 if executor.get("executor") == "ray" else 1):
            if round:
                time.sleep(3)
            runtime.verify_many_sync([Claim(payload={"warm-up": round * workers + i}) for i in range(workers)])
        for _ in range(runs):
            start = time.perf_counter()
            verdicts = runtime.verify_many_sync(claims)
            walls.append(time.perf_counter() - start)
            certified = sum(v.certified for v in verdicts)
            assert not any(v.invalid for v in verdicts), [v.reason for v in verdicts if v.invalid][:3]
    return statistics.median(walls), certified


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="process workers, and CPUs of the Ray cluster")
    parser.add_argument("--kernel-n", type=int, default=4000)
    parser.add_argument("--kernel-batch", type=int, default=64)
    parser.add_argument("--verilog-problems", type=int, default=16)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if args.workers < 2:
        sys.exit("--workers: at least 2 (the two-node cluster has workers // 2 CPUs per node)")

    cases = {"kernel": kernel_case(args.kernel_n, args.kernel_batch)}
    try:
        cases["verilog"] = verilog_case(args.verilog_problems)
    except Exception as exc:  # noqa: BLE001 - no simulator or sandbox here: the row is skipped, saying why
        print(f"verilog row skipped: {exc}")
    noop = FakeVerifier()
    noop_claims = [Claim(f"d{i}", {"i": i}) for i in range(args.calls)]

    results: dict[tuple[str, str], tuple[float, int]] = {}
    local = {"in_process": {}, "process": {"executor": "process", "workers": args.workers}}
    for where, executor in local.items():
        for name, (verifier, claims, batch) in cases.items():
            results[name, where] = measure(verifier, claims, batch, executor, args.workers, args.runs)
        results["no-op", where] = measure(noop, noop_claims, 1, executor, args.workers, args.runs, in_flight=1)

    for where, worker_cpus in (("ray 1 node", None), ("ray 2 nodes", args.workers // 2)):
        head_cpus = args.workers if worker_cpus is None else args.workers - worker_cpus
        cluster = LocalRayCluster(Path(tempfile.mkdtemp(prefix="pg-ray-bench-")))
        try:
            started = time.perf_counter()
            cluster.start(head_cpus=head_cpus, worker_cpus=worker_cpus)
            print(f"{where}: cluster up in {time.perf_counter() - started:.1f} s")
            for mode in ("actors", "tasks"):
                executor = {"executor": "ray", "workers": args.workers,
                            "ray": RayConfig(address=cluster.address, mode=mode)}
                label = where if mode == "actors" else f"{where} tasks"
                if mode == "actors":
                    for name, (verifier, claims, batch) in cases.items():
                        results[name, label] = measure(verifier, claims, batch, executor, args.workers, args.runs)
                results["no-op", label] = measure(noop, noop_claims, 1, executor, args.workers, args.runs,
                                                  in_flight=1)
        finally:
            cluster.stop()

    print(f"\nmedian of {args.runs} runs, {args.workers} CPUs everywhere\n")
    print(f"{'row':<8} {'executor':<18} {'items':>6} {'wall s':>8} {'items/s':>9} {'vs process':>10}")
    sizes = {name: len(claims) for name, (_, claims, _) in cases.items()} | {"no-op": args.calls}
    for name in [*cases, "no-op"]:
        base = results[name, "process"][0]
        for (row, where), (wall, _) in results.items():
            if row == name:
                print(f"{row:<8} {where:<18} {sizes[row]:>6} {wall:>8.3f} {sizes[row] / wall:>9.1f} "
                      f"{wall / base:>9.2f}x")
    per_call = {where: wall / args.calls * 1000 for (row, where), (wall, _) in results.items() if row == "no-op"}
    print("\nper-call overhead (no-op verifier, one call in flight), ms: "
          + ", ".join(f"{where} {ms:.2f}" for where, ms in per_call.items()))
    print(f"Ray actors over the process pool: +{per_call['ray 1 node'] - per_call['process']:.2f} ms per call "
          f"on one node, +{per_call['ray 2 nodes'] - per_call['process']:.2f} ms across two")
    if "verilog" in cases:
        n = sizes["verilog"]
        job_s = results["verilog", "process"][0] * args.workers / n
        print(f"verilog: {job_s * 1000:.0f} ms of one CPU per design on the process pool "
              f"({args.workers} workers; cost of one job, for the scaling estimate)")


if __name__ == "__main__":
    from _record import record

    record("ray_verification", main)
