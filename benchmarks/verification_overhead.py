"""How much of a GRPO step does verification cost? (the reference harness's scenario, reproduced)

A remote verifier is stubbed so that every call takes ``--latency`` seconds (default 50 ms) whether it
carries one claim or a batch of up to ``--max-batch`` claims (like the AmberTrace batch endpoint).
One step verifies ``--batch`` prompts x ``--group-size`` completions with at most ``--concurrency``
calls in flight, beside ``--step-compute`` seconds of simulated trainer compute:

    overhead = verify / (compute + verify)

Rows: (a) a naive one-claim-per-call loop; (b) the runtime with concurrency only; (c) with batched
calls, cold cache, all claims distinct; (d) with realistic GRPO repetition (``--repeat-share`` of the
groups carry one claim across the whole group); (e) a warm cache. When ``ambertrace-rlvr`` is
installed (``pip install -e '.[bench]'``), its own verifier runs against the same stub as the
reference rows. Each figure is the median of ``--runs`` runs. Targets: (c) within 1.5x of one round
trip (the physical floor); (d) and (e) below that.

    python benchmarks/verification_overhead.py [--runs 5] [--latency 0.05] ...
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Callable, Sequence

from proofgym import Claim
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import certified


class RemoteStub:
    """A remote verifier: one round trip per call, whatever the batch size (up to ``max_batch_size``)."""

    name = "remote-stub"
    version = "1"
    uses_decision = False

    def __init__(self, latency_s: float, max_batch_size: int) -> None:
        self.latency_s = latency_s
        self.max_batch_size = max_batch_size
        self.calls = 0
        self.claims_sent = 0

    async def verify_many(self, claims: Sequence[Claim]) -> list:
        if len(claims) > self.max_batch_size:
            raise ValueError(f"batch of {len(claims)} exceeds the endpoint's limit {self.max_batch_size}")
        self.calls += 1
        self.claims_sent += len(claims)
        await asyncio.sleep(self.latency_s)
        return [certified("permit") for _ in claims]


def make_step(step: int, batch: int, group: int, repeat_share: float) -> list[Claim]:
    """One GRPO step's claims: ``batch`` prompts x ``group`` completions.

    The first ``repeat_share`` of the groups repeat one claim across the group (completions that
    differ only in their reasoning), the rest are all distinct.
    """
    repeated_groups = round(batch * repeat_share)
    claims = []
    for p in range(batch):
        for g in range(group):
            variant = 0 if p < repeated_groups else g
            claims.append(Claim(decision="permit", facts={"step": step, "prompt": p, "variant": variant},
                                reasoning=f"completion {g} of prompt {p}"))
    return claims


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measured(stub: RemoteStub, fn: Callable[[], object]) -> tuple[float, int, int]:
    """Seconds taken by ``fn``, and the calls / claims the stub received meanwhile."""
    calls, sent = stub.calls, stub.claims_sent
    seconds = timed(fn)
    return seconds, stub.calls - calls, stub.claims_sent - sent


def naive_loop(args, step: int) -> tuple[float, int, int]:
    stub = RemoteStub(args.latency, args.max_batch)
    claims = make_step(step, args.batch, args.group_size, 0.0)

    async def run() -> None:
        for claim in claims:
            await stub.verify_many([claim])

    return measured(stub, lambda: asyncio.run(run()))


def runtime_row(args, step: int, *, batch_size: int, repeat_share: float, warm: bool) -> tuple[float, int, int]:
    stub = RemoteStub(args.latency, args.max_batch)
    config = RuntimeConfig(max_concurrency=args.concurrency, batch_size=batch_size, timeout_s=30,
                           cache_size=100_000 if warm else 0)
    claims = make_step(step, args.batch, args.group_size, repeat_share)
    with VerificationRuntime(stub, config) as runtime:
        if warm:
            runtime.verify_many_sync(claims)
        return measured(stub, lambda: runtime.verify_many_sync(claims))


def reference_row(args, step: int, *, batch_endpoint: bool) -> tuple[float, int | None, int | None]:
    from ambertrace_rlvr import parsers as ref_parsers
    from ambertrace_rlvr.domain import VerifiableDomain
    from ambertrace_rlvr.verifier import AmberVerifier

    latency = args.latency

    def answer() -> dict:
        return {"decision": "permit", "answer": "permit", "proof_checked": True,
                "explanation": {"confidence": {"overall": 1.0}, "symbolic_trace": {"rules": []}}}

    class Platforms:
        def query(self, platform_id, **kwargs):
            time.sleep(latency)
            return answer()

    class BatchPlatforms(Platforms):
        def query_batch(self, platform_id, queries, **kwargs):
            if len(queries) > args.max_batch:
                raise ValueError("batch too large")
            time.sleep(latency)
            return {"results": [{"index": i, "status": "ok", "data": answer()} for i in range(len(queries))]}

    class Client:
        platforms = BatchPlatforms() if batch_endpoint else Platforms()

    domain = VerifiableDomain(platform_id=1, parser=ref_parsers.JSONBlockParser(), api_key="bench")
    verifier = AmberVerifier(domain=domain, max_concurrency=args.concurrency, cache=False)
    verifier._client = Client()
    parsed = [ref_parsers.ParsedCompletion(query="permit?", facts=dict(c.facts))
              for c in make_step(step, args.batch, args.group_size, 0.0)]
    return timed(lambda: verifier.verify_batch(parsed)), None, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=32, help="prompts per step")
    parser.add_argument("--group-size", type=int, default=8, help="completions per prompt")
    parser.add_argument("--concurrency", type=int, default=16, help="verifier calls in flight")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per verifier call")
    parser.add_argument("--max-batch", type=int, default=50, help="claims per call the endpoint accepts")
    parser.add_argument("--step-compute", type=float, default=2.0, help="simulated trainer seconds per step")
    parser.add_argument("--repeat-share", type=float, default=0.5, help="share of groups repeating one claim")
    parser.add_argument("--runs", type=int, default=5, help="runs per row (the median is printed)")
    args = parser.parse_args()

    rows: list[tuple[str, Callable[[int], tuple[float, int | None, int | None]]]] = [
        ("(a) naive loop, one claim per call", lambda s: naive_loop(args, s)),
        ("(b) runtime, concurrency only", lambda s: runtime_row(args, s, batch_size=1, repeat_share=0.0,
                                                                warm=False)),
        ("(c) runtime, batched calls (cold, distinct)", lambda s: runtime_row(args, s, batch_size=args.max_batch,
                                                                              repeat_share=0.0, warm=False)),
        (f"(d) runtime, batched + GRPO repetition {args.repeat_share:.0%}",
         lambda s: runtime_row(args, s, batch_size=args.max_batch, repeat_share=args.repeat_share, warm=False)),
        ("(e) runtime, warm cache", lambda s: runtime_row(args, s, batch_size=args.max_batch, repeat_share=0.0,
                                                          warm=True)),
    ]
    try:
        import ambertrace_rlvr  # noqa: F401  (benchmark-only dependency)

        rows.append(("ref: ambertrace-rlvr one-at-a-time path", lambda s: reference_row(args, s,
                                                                                        batch_endpoint=False)))
        rows.append(("ref: ambertrace-rlvr batch path", lambda s: reference_row(args, s, batch_endpoint=True)))
    except ImportError:
        print("(ambertrace-rlvr not installed: reference rows skipped; pip install -e '.[bench]')")

    claims = args.batch * args.group_size
    floor = args.latency
    print(f"step: {args.batch} prompts x {args.group_size} = {claims} claims; {args.latency * 1000:.0f} ms per call "
          f"(<= {args.max_batch} claims); <= {args.concurrency} calls in flight; {args.step_compute:.1f} s compute; "
          f"median of {args.runs} runs")
    print(f"physical floor: one round trip = {floor * 1000:.0f} ms = "
          f"{floor / (args.step_compute + floor):.2%} overhead\n")
    header = f"{'row':<48} {'verify ms':>10} {'overhead':>9} {'speed-up':>9} {'x floor':>8} {'calls':>6} {'sent':>5}"
    print(header)
    print("-" * len(header))
    first = None
    for step_base, (label, run) in enumerate(rows):
        results = [run(step_base * 1000 + r) for r in range(args.runs)]
        verify = statistics.median(seconds for seconds, _, _ in results)
        _, calls, sent = results[-1]
        first = first or verify
        overhead = verify / (args.step_compute + verify)
        print(f"{label:<48} {verify * 1000:>10.1f} {overhead:>9.2%} {first / verify:>8.1f}x {verify / floor:>8.2f}"
              f" {'-' if calls is None else calls:>6} {'-' if sent is None else sent:>5}")
    print("\ncalls / sent: verifier calls and claims the remote endpoint received in the last run of the row")


if __name__ == "__main__":
    from _record import record

    record("verification_overhead", main)
