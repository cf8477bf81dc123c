"""Trace-store write rate: events per second committed, three ways, against the one-transaction-per-session baseline.

Each session has 5 steps; each step one LM call (a chat request of about 1 KB and its response), one environment
event and two event rewards; the last step a verification; the session an outcome reward: 22 events (and 5 step
rows) per session. Modes, each the median of ``--runs`` runs on a fresh store:
- baseline: ``write_session`` per session (one transaction each);
- batched:  ``write_sessions`` in batches of ``--batch`` (one transaction per batch);
- writer:   a ``TraceWriter`` (default batching) fed by ``--threads`` threads, timed until ``close()`` returns.
Validation and JSON encoding are part of every write and are timed.

    python benchmarks/trace_store.py [--sessions 1000] [--runs 5] [--batch 64] [--threads 16] [--url URL]

Without ``--url`` each run writes a new SQLite file (WAL, synchronous=NORMAL) in a temporary folder; with a URL
(e.g. postgresql+psycopg://...) each run writes its own run id and session ids into that database.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from sqlalchemy.engine import make_url

from proofgym.traces import (
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    TraceStore,
    TraceWriter,
    VerificationEvent,
)

STEPS = 5
SYSTEM = ("You decide grant eligibility. Reason inside <reasoning></reasoning>, then emit exactly one "
          "<decision>{JSON}</decision> block with the classification and the facts you used. ") * 3


def make_session(i: int, run_id: str, tag: str) -> SessionTrace:
    steps = []
    for k in range(STEPS):
        last = k == STEPS - 1
        answer = f'<reasoning>step {k}: income below threshold</reasoning><decision>{{"classification": "permit", ' \
                 f'"facts": {{"age": {20 + i % 40}, "annual_income": {18000 + 37 * i}}}}}</decision>'
        steps.append(StepTrace(
            index=k, observation={"text": f"applicant {i}, turn {k}", "facts_seen": k},
            action={"tool": "submit" if last else "ask", "args": {"text": answer}},
            reward=0.2 if last else 0.0, done=last,
            info={"turn": k},
            lm_calls=[LMCallEvent(
                model="Qwen/Qwen3-0.6B",
                request={"messages": [{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": f"Applicant {i}: age {20 + i % 40}, resident."}],
                         "temperature": 0.7, "max_tokens": 256},
                response={"choices": [{"message": {"role": "assistant", "content": answer}}],
                          "usage": {"prompt_tokens": 180, "completion_tokens": 64}},
                prompt_tokens=180, completion_tokens=64, latency_s=0.031)],
            env_event=EnvEvent(tool="submit" if last else "ask", args={"text": answer[:40]},
                               result={"accepted": True, "message": "ok"}, reward=0.2 if last else 0.0, done=last),
            verification=VerificationEvent(
                verifier="rulebook", outcome="certified",
                verdict={"outcome": "certified", "decision": "permit", "proof_checked": True,
                         "evidence": {"rules_fired": ["income_limit", "age_limit", "permit_default"]}})
            if last else None,
            event_rewards=[EventReward(0.1, kind="shaped", key="format", source="shaper"),
                           EventReward(-0.01 * k, kind="penalty", key="length", source="shaper")]))
    return SessionTrace(session_id=f"{tag}-{i:07d}", run_id=run_id, env_name="grant_eligibility", seed=i,
                        policy_id="bench", correlation_id=f"trace_{tag}_{i}", started_at=time.time(),
                        ended_at=time.time(), steps=steps,
                        outcome_reward=OutcomeReward(total=0.2 + 0.1 * STEPS, steps=STEPS, score=1.0))


def count_events(session: SessionTrace) -> int:
    per_step = sum(len(s.lm_calls) + (s.env_event is not None) + (s.verification is not None)
                   + len(s.event_rewards) for s in session.steps)
    return per_step + (session.outcome_reward is not None)


def one_run(mode: str, args: argparse.Namespace, folder: Path) -> float:
    """Seconds to commit ``args.sessions`` sessions in ``mode`` on a fresh store (setup not timed)."""
    tag = uuid.uuid4().hex[:8]
    url = args.url or str(folder / f"{tag}.db")
    with TraceStore(url) as store:
        run_id = store.start_run(f"bench-{tag}", kind="benchmark")
        sessions = [make_session(i, run_id, tag) for i in range(args.sessions)]
        start = time.perf_counter()
        if mode == "baseline":
            for session in sessions:
                store.write_session(session)
        elif mode == "batched":
            for at in range(0, len(sessions), args.batch):
                store.write_sessions(sessions[at:at + args.batch])
        else:
            writer = TraceWriter(store)
            shares = [sessions[k::args.threads] for k in range(args.threads)]
            threads = [threading.Thread(target=lambda part=part: [writer.submit(s) for s in part])
                       for part in shares]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            writer.close()
        elapsed = time.perf_counter() - start
        assert store.count_sessions(run_id=run_id) == args.sessions
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--url", default=None, help="A database URL instead of a fresh SQLite file per run.")
    args = parser.parse_args()

    events = count_events(make_session(0, "r", "t")) * args.sessions
    print(f"trace store write rate: {args.sessions} sessions x {events // args.sessions} events "
          f"({STEPS} steps each); median of {args.runs} runs; "
          + (f"database {make_url(args.url).render_as_string(hide_password=True)}" if args.url else
             f"fresh SQLite {sqlite3.sqlite_version} file per run (WAL, synchronous=NORMAL)")
          + f"; {os.cpu_count()} CPUs")
    modes = {"baseline": "write_session per session", "batched": f"write_sessions, batches of {args.batch}",
             "writer": f"TraceWriter, {args.threads} threads"}
    with tempfile.TemporaryDirectory(prefix="proofgym-bench-") as folder:
        medians = {}
        for mode in modes:
            runs = [one_run(mode, args, Path(folder)) for _ in range(args.runs)]
            medians[mode] = statistics.median(runs)
    base = events / medians["baseline"]
    print(f"{'mode':<40} {'sessions/s':>11} {'events/s':>11} {'vs baseline':>12}")
    for mode, label in modes.items():
        rate = events / medians[mode]
        print(f"{label:<40} {args.sessions / medians[mode]:>11,.0f} {rate:>11,.0f} {rate / base:>11.2f}x")


if __name__ == "__main__":
    from _record import record

    record("trace_store", main)
