"""How much memory does the verification cache of a task app's worker take as distinct claims arrive?

Each configuration runs in a fresh subprocess: the grant domain's reward function (the task app's default
run config: ``cache_size`` 100,000) verifies ``--claims`` distinct gold claims in batches of 100, and the
process's resident set size (RSS) is read before and after. Baseline, measured in the same run: the same with
the byte bound off (``cache_max_mb: null``: entries only, as before the bound existed). Printed per
configuration: RSS growth, entries kept, the cache's own estimate, evictions, and claims/s (median of
``--runs`` runs).

    python benchmarks/cache_memory.py [--claims 20000] [--runs 3] [--bounds 64 16]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
from proofgym.core import Claim
from proofgym.domains import default_run_config
from proofgym.config import parse_run_config

bound, count = json.loads(sys.argv[1]), int(sys.argv[2])
data = default_run_config("grant_eligibility").model_dump(mode="json", exclude_none=False)
data["runtime"]["cache_max_mb"] = bound
def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096
with parse_run_config(data).reward_function() as reward_fn:
    runtime = reward_fn.runtime
    claim = lambda i: Claim(decision="permit", facts={"age": 18 + i % 60, "annual_income": i, "resident": True,
                                                      "has_active_grant": False})
    runtime.verify_many_sync([claim(-1)])
    before, started = rss(), time.perf_counter()
    for start in range(0, count, 100):
        runtime.verify_many_sync([claim(i) for i in range(start, min(start + 100, count))])
    elapsed = time.perf_counter() - started
    metrics = runtime.metrics()
    print(json.dumps({"rss_growth": rss() - before, "entries": metrics.cache_entries, "estimate": metrics.cache_bytes,
                      "evictions": metrics.cache_evictions, "claims_per_s": count / elapsed}))
"""


def measure(bound: float | None, claims: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(bound), str(claims)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bounds", type=float, nargs="+", default=[64.0, 16.0], help="cache_max_mb values")
    args = parser.parse_args()
    print(f"verification cache memory: {args.claims} distinct grant claims, medians of {args.runs} runs")
    print(f"{'cache_max_mb':>12} {'RSS growth MB':>14} {'entries':>8} {'estimate MB':>12} {'evictions':>10} "
          f"{'claims/s':>9}")
    rows = {}
    for bound in [None, *args.bounds]:
        runs = [measure(bound, args.claims) for _ in range(args.runs)]
        row = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        rows[bound] = row
        print(f"{'none' if bound is None else f'{bound:g}':>12} {row['rss_growth'] / 2**20:>14.1f} "
              f"{row['entries']:>8.0f} {row['estimate'] / 2**20:>12.1f} {row['evictions']:>10.0f} "
              f"{row['claims_per_s']:>9.0f}")
    base = rows[None]
    for bound in args.bounds:
        print(f"cache_max_mb {bound:g} vs none: RSS growth {rows[bound]['rss_growth'] / base['rss_growth']:.2f}x, "
              f"throughput {rows[bound]['claims_per_s'] / base['claims_per_s']:.2f}x")


if __name__ == "__main__":
    from _record import record

    record("cache_memory", main)
