"""The viewer's GRPO group page on a store the size of a long demo run: reading the samples of a training step one
session at a time (as the page did) against reading them together (``TraceStore.get_sessions``, as it does now).

The store is made through the demo's own path: one batch of completions to ``--groups`` prompts (``--group-size``
samples each: right answers, wrong ones, unreadable ones) is scored by the demo's reward function, and the demo's
trace writer (``proofgym.training._demo._sessions``) stores it once per training step, ``--steps`` steps (default
400 x 16 x 8 = 51,200 sessions). It is kept at ``--store`` and reused when it exists.

For one group of a step in the middle of the run it prints the median of ``--repeats`` timings (and the SQL
statements each issues) of: the old per-session read, the batched read, and the whole page through the viewer's
ASGI app (FastAPI's test client: routing, the reads, the rendering).

    python benchmarks/view_group_page.py [--steps 400] [--groups 16] [--group-size 8] [--repeats 15] [--store PATH]

Goal: the page in <= 300 ms on the 51k-session store.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from fastapi.testclient import TestClient
from sqlalchemy import event

from proofgym.traces import TraceStore
from proofgym.training import CompactGRPOStep, Rollout, demo_rows, demo_run_config, group_advantages
from proofgym.training._demo import _sessions
from proofgym.view import create_view_app
from proofgym.view._evidence import group_of

RUN = "bench-demo"
MAX_GROUP_SESSIONS = 512  # the page's cap on the sessions of one step it reads


def _completion(row: dict[str, Any], kind: int) -> str:
    """Kind 0: the right answer, 1: the wrong decision, 2: a completion the parser cannot read."""
    facts = dict(row["source_facts"])
    if kind == 2:
        return "<decision>{\"facts\": {\"age\": "  # unreadable: a format failure
    decision = row["gold"] if kind != 1 else ("deny" if row["gold"] == "permit" else "permit")
    return f"<decision>{json.dumps({'facts': facts, 'classification': decision})}</decision>"


def generate(path: Path, steps: int, groups: int, size: int) -> None:
    started = time.perf_counter()
    rows = demo_rows(0, groups)
    owners = [g for g in range(groups) for _ in range(size)]
    completions = [_completion(rows[g], (0, 1, 2, 0)[i % 4]) for i, g in enumerate(owners)]
    refs = [rows[g] for g in owners]
    with demo_run_config().reward_function() as reward_fn:
        items = reward_fn.score([r["prompt"] for r in refs], completions, refs)
    advantages = group_advantages([item.reward for item in items], size)
    rollouts = [Rollout(row=refs[i], completion=completions[i], item=items[i], group=owners[i],
                        advantage=advantages[i]) for i in range(len(items))]
    with TraceStore(path) as store:
        store.start_run(RUN, kind="demo", env_name="grant_eligibility")
        for step in range(1, steps + 1):
            store.write_sessions(_sessions(CompactGRPOStep(step=step, metrics={}, rollouts=rollouts), RUN, 0))
    print(f"generated {steps * groups * size} sessions ({steps} steps x {groups} groups x {size}) in "
          f"{time.perf_counter() - started:.0f} s: {path} ({path.stat().st_size / 2**20:.0f} MiB)")


def per_session(store: TraceStore, session_id: str) -> list[Any]:
    """The group's members as the page read them before: each session of the step loaded on its own."""
    session = store.get_session(session_id)
    key = group_of(session)
    prefix = session_id.rsplit("-", 1)[0] + "-"
    members = []
    for summary in store.list_sessions(run_id=session.run_id, id_prefix=prefix, limit=MAX_GROUP_SESSIONS):
        other = store.get_session(summary.session_id)
        if other is not None and group_of(other) == key:
            members.append(other)
    return members


def together(store: TraceStore, session_id: str) -> list[Any]:
    """The group's members as the page reads them now: the step's sessions in one batched read."""
    session = store.get_session(session_id)
    key = group_of(session)
    step = store.list_sessions(run_id=session.run_id, id_prefix=session_id.rsplit("-", 1)[0] + "-",
                               limit=MAX_GROUP_SESSIONS)
    return [m for m in store.get_sessions([s.session_id for s in step]) if group_of(m) == key]


def timed(engine: Any, call: Callable[[], Any], repeats: int) -> tuple[float, int, Any]:
    """Median seconds of ``call`` over ``repeats`` runs (after one warm-up), the statements one run issues, and
    what it returned."""
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        statements.append(statement)

    result = call()
    event.listen(engine, "before_cursor_execute", count)
    call()
    event.remove(engine, "before_cursor_execute", count)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), len(statements), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--groups", type=int, default=16)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "proofgym_view_group_bench.db")
    args = parser.parse_args()
    if not args.store.exists():
        generate(args.store, args.steps, args.groups, args.group_size)
    app = create_view_app(args.store)
    store: TraceStore = app.state.store
    total = store.count_sessions(run_id=RUN)
    step = max(1, total // (args.groups * args.group_size) // 2)
    session_id = f"{RUN}-{step:05d}-{args.group_size:04d}"  # the first sample of the second group
    old_s, old_q, old_members = timed(store._engine, lambda: per_session(store, session_id), args.repeats)
    new_s, new_q, new_members = timed(store._engine, lambda: together(store, session_id), args.repeats)
    assert [m.session_id for m in old_members] == [m.session_id for m in new_members]
    with TestClient(app) as client:
        page_s, page_q, response = timed(store._engine, lambda: client.get(f"/groups/{session_id}"), args.repeats)
    assert response.status_code == 200 and response.text.count('class="sample') == len(new_members)
    print(f"store: {total} sessions; group of {len(new_members)} samples in a step of "
          f"{args.groups * args.group_size} sessions; median of {args.repeats} runs")
    print(f"{'':<34} {'ms':>8} {'queries':>8}")
    print(f"{'members read one by one (before)':<34} {old_s * 1e3:8.1f} {old_q:8d}")
    print(f"{'members read together (now)':<34} {new_s * 1e3:8.1f} {new_q:8d}   {old_s / new_s:.1f}x faster")
    print(f"{'the whole group page (now)':<34} {page_s * 1e3:8.1f} {page_q:8d}   "
          f"{'met' if page_s <= 0.3 else 'NOT MET'} (<= 300 ms)")


if __name__ == "__main__":
    from _record import record

    record("view_group_page", main)
