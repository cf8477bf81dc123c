"""Viewer server time on a large store: the runs page, a filtered sessions page, a session page, and exporting a
1k-session run; p50 / p95 over ``--requests`` requests each, against the same store without the schema-2 indexes.

The store is generated once (``--store``, reused when it exists): ``--sessions`` sessions (default 100k, the last
1k in a run of their own) of ``--steps`` steps (default 10), each step with an observation, a tool-call action,
reward components and an event reward, the last step a rule-kernel verification with its proof. Each page is
requested through the viewer's ASGI app in this process (FastAPI's test client: no sockets), so the time is the
server's: routing, the store's queries and the rendering. The baseline is a copy of the store with the indexes
schema version 2 added dropped (what a version-1 store had), the same requests in the same run.

    python benchmarks/view_pages.py [--sessions 100000] [--steps 10] [--requests 40] [--store PATH]

Goal: p95 <= 300 ms for each page on the indexed store.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from proofgym.traces import EventReward, OutcomeReward, SessionTrace, StepTrace, TraceStore, VerificationEvent
from proofgym.traces._schema import sessions as sessions_table
from proofgym.view import create_view_app, export_run

OUTCOMES = ("certified", "refuted", "invalid", "format_error")
V1_INDEXES = {"ix_sessions_run_id", "ix_sessions_env_name", "ix_sessions_correlation_id", "ix_sessions_total_reward",
              "ix_sessions_started_at"}
BIG_RUN, SMALL_RUN = "bench-big", "bench-1k"


def _session(i: int, run_id: str, steps: int, rng: random.Random) -> SessionTrace:
    outcome = OUTCOMES[rng.randrange(4)]
    trace = []
    for k in range(steps):
        last = k == steps - 1
        components = {"format": 0.1, "certified": 0.5 * (outcome == "certified") if last else 0.0,
                      "step_penalty": -0.01}
        verdict = {"outcome": outcome, "decision": "permit", "verifier": "rulebook:grant", "reason": "checked",
                   "evidence": {"decision": "permit", "status": "decided", "proof_checked": True,
                                "deciding_rules": ["permit_eligible"], "rejected_facts": [],
                                "proof": {"inputs": {"age": 20 + i % 50, "income": 1000 * (i % 40)},
                                          "firings": [{"rule": f"r{n}", "stratum": 1, "premises": {"age": i % 90},
                                                       "conclusion": {"fact": f"f{n}", "value": True}}
                                                      for n in range(6)]}}}
        trace.append(StepTrace(
            index=k, observation={"text": f"applicant {i} turn {k}: " + "record text " * 15,
                                  "data": {"record_id": f"rec-{i % 5000}"}},
            action={"tool": "answer" if last else "ask", "args": {"completion": f"<reasoning>{i}.{k}</reasoning>"
                                                                                 + "words " * 40}},
            reward=sum(components.values()), done=last, info={"turn": k + 1, "reward_components": components},
            event_rewards=[EventReward(0.1, key="format", source="environment")],
            verification=VerificationEvent("rulebook:grant", outcome, verdict) if last else None))
    total = sum(s.reward for s in trace)
    return SessionTrace(session_id=f"{run_id}-{i:07d}", run_id=run_id, env_name="grant_eligibility", seed=i % 1000,
                        policy_id="policy-a", correlation_id=f"cid-{i}", started_at=1.7e9 + i, steps=trace,
                        outcome_reward=OutcomeReward(total=total, steps=steps, score=float(outcome == "certified")))


def generate(path: Path, n: int, steps: int) -> None:
    rng = random.Random(0)
    started = time.perf_counter()
    with TraceStore(path) as store:
        store.start_run(BIG_RUN, kind="eval", env_name="grant_eligibility")
        store.start_run(SMALL_RUN, kind="eval", env_name="grant_eligibility")
        batch = []
        for i in range(n):
            batch.append(_session(i, SMALL_RUN if i >= n - 1000 else BIG_RUN, steps, rng))
            if len(batch) == 500:
                store.write_sessions(batch)
                batch = []
        if batch:
            store.write_sessions(batch)
    print(f"generated {n} sessions x {steps} steps in {time.perf_counter() - started:.0f} s: {path} "
          f"({path.stat().st_size / 2**20:.0f} MiB)")


def without_v2_indexes(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as raw:
        for index in sessions_table.indexes:
            if index.name not in V1_INDEXES:
                raw.execute(f"DROP INDEX IF EXISTS {index.name}")
        raw.execute("ANALYZE")


def _quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(path: Path, n: int, requests: int) -> dict[str, tuple[float, float]]:
    rng = random.Random(1)
    pages = {
        "runs page": lambda: "/",
        "filtered sessions page": lambda: (f"/sessions?run={BIG_RUN}&outcome={rng.choice(OUTCOMES)}"
                                           f"&min_reward=0&order=-reward&page={rng.randrange(1, 40)}"),
        "sessions page, deep": lambda: f"/sessions?run={BIG_RUN}&page={rng.randrange(1000, 1900)}",
        "session page": lambda: f"/sessions/{BIG_RUN}-{rng.randrange(n - 1000):07d}",
    }
    results = {}
    with TestClient(create_view_app(path)) as client:
        for name, url in pages.items():
            client.get(url())  # warm
            times = []
            for _ in range(requests):
                target = url()
                started = time.perf_counter()
                response = client.get(target)
                times.append(time.perf_counter() - started)
                assert response.status_code == 200, (target, response.text[-500:])
            results[name] = _quantiles(times)
    return results


def export_time(path: Path, runs: int) -> float:
    times = []
    with TraceStore(path, create=False) as store:
        for _ in range(runs):
            out = Path(tempfile.mkdtemp()) / "bundle"
            started = time.perf_counter()
            result = export_run(store, SMALL_RUN, out)
            times.append(time.perf_counter() - started)
            assert result.sessions == 1000
            shutil.rmtree(out.parent)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--exports", type=int, default=3)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "proofgym_view_bench.db")
    args = parser.parse_args()
    if not args.store.exists():
        generate(args.store, args.sessions, args.steps)
    with sqlite3.connect(args.store) as raw:  # a store kept from an earlier version of this script: today's indexes
        for index in sessions_table.indexes:
            columns = ", ".join(c.name for c in index.columns)
            raw.execute(f"CREATE INDEX IF NOT EXISTS {index.name} ON sessions ({columns})")
        raw.execute("ANALYZE")
    with TraceStore(args.store, create=False) as store:
        n = store.count_sessions()
    baseline_path = args.store.with_name(args.store.stem + "_v1_indexes.db")
    without_v2_indexes(args.store, baseline_path)
    try:
        indexed = measure(args.store, n, args.requests)
        baseline = measure(baseline_path, n, args.requests)
    finally:
        baseline_path.unlink(missing_ok=True)
    print(f"store: {n} sessions x {args.steps} steps; {args.requests} requests per page; ms")
    print(f"{'page':<26} {'p50':>8} {'p95':>8}   {'v1 idx p50':>10} {'v1 idx p95':>10}   {'p95 ratio':>9}  goal")
    for name, (p50, p95) in indexed.items():
        b50, b95 = baseline[name]
        print(f"{name:<26} {p50 * 1e3:8.1f} {p95 * 1e3:8.1f}   {b50 * 1e3:10.1f} {b95 * 1e3:10.1f}   "
              f"{b95 / p95:8.1f}x  {'met' if p95 <= 0.3 else 'NOT MET'} (p95 <= 300 ms)")
    print(f"export of the 1k-session run: {export_time(args.store, args.exports):.2f} s (median of {args.exports})")


if __name__ == "__main__":
    from _record import record

    record("view_pages", main)
