"""How many trajectories per second can an LLM judge score? (naive client against proofgym's LLMJudge)

A fake judge model (``tests/judges/_fake_judges.py``: a real OpenAI-compatible HTTP server on loopback) takes
``--latency`` seconds per call (default 200 ms) whatever it is asked, and answers valid verdicts. Every trajectory
is judged on a rubric of ``--criteria`` LLM criteria (default 4). Rows, in one run of this script:

- naive: one call per criterion, one call at a time, no cache (what a loop over criteria with a chat client does);
  measured over the first ``--naive-trajectories`` trajectories (it is strictly sequential, so its rate does not
  depend on how many it is given, and the full step would take minutes);
- proofgym, distinct: :class:`~proofgym.judges.LLMJudge`, all criteria in one call, ``--concurrency`` calls in
  flight, a cold cache, every trajectory distinct (no repetition to exploit);
- proofgym, GRPO repetition: the same, on a step of ``--trajectories`` trajectories in groups of ``--group-size``
  where ``--repeat-share`` of the groups hold only ``--variants`` distinct completions (a group of an easy prompt
  whose completions agree), judged once each by in-batch de-duplication.

Each figure is the median of ``--repeats`` runs (each proofgym run with a fresh judge: a cold cache). Printed:
trajectories per second, calls the model received, wall seconds, and the speed-up over naive. Target: >= 20x at
16 calls in flight.

    python benchmarks/judge_throughput.py [--repeats 3] [--latency 0.2] [--concurrency 16] [--trajectories 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from judges._fake_judges import FakeJudgeServer, Latency  # noqa: E402  (the fake judge model the tests use)

from proofgym.judges import Criterion, JudgeItem, LLMJudge, Rubric  # noqa: E402
from proofgym.judges._prompt import build_messages  # noqa: E402
from proofgym.runtime import RuntimeConfig  # noqa: E402


def rubric(criteria: int) -> Rubric:
    return Rubric(id="bench", goal_text="Solve the task and explain the solution.", criteria=tuple(
        Criterion(id=f"criterion_{i}", description=f"Aspect {i} of the answer is right.",
                  scale={"kind": "bounded", "min": 0, "max": 10}) for i in range(criteria)))


def step(args: argparse.Namespace, run: int, repeat_share: float) -> list[JudgeItem]:
    """One GRPO step's outcome items: the first ``repeat_share`` of the groups repeat ``--variants`` completions."""
    judged = rubric(args.criteria)
    groups = args.trajectories // args.group_size
    repeated = round(groups * repeat_share)
    items = []
    for group in range(groups):
        for member in range(args.group_size):
            variant = member % args.variants if group < repeated else member
            text = (f"## Step 0\nObservation:\nrun {run}, prompt {group}\nAction:\nanswer {variant}: "
                    + "the working, line by line. " * 40)
            items.append(JudgeItem(level="outcome", rubric=judged, candidate=text, group=f"{run}-{group}"))
    return items


def naive(server: FakeJudgeServer, items: list[JudgeItem]) -> tuple[float, int]:
    """One POST per criterion, one at a time: seconds taken and calls made."""
    calls = server.calls
    started = time.perf_counter()
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        for item in items:
            for criterion in item.rubric.criteria:
                response = client.post("/chat/completions", json={
                    "model": "judge", "temperature": 0.0, "messages": build_messages(item, [criterion])})
                response.raise_for_status()
    return time.perf_counter() - started, server.calls - calls


def proofgym(server: FakeJudgeServer, items: list[JudgeItem], concurrency: int) -> tuple[float, int]:
    """A fresh LLMJudge over the whole step: seconds taken and calls made."""
    calls = server.calls
    judge = LLMJudge(server.base_url, "judge", runtime=RuntimeConfig(max_concurrency=concurrency, timeout_s=60))
    try:
        started = time.perf_counter()
        verdicts = judge.judge_sync(items)
        seconds = time.perf_counter() - started
    finally:
        judge.close()
    invalid = [v.reason for v in verdicts if not v.valid]
    if invalid:
        raise SystemExit(f"the judge gave {len(invalid)} invalid verdicts, e.g. {invalid[0]}")
    return seconds, server.calls - calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per judge call")
    parser.add_argument("--criteria", type=int, default=4, help="LLM criteria per trajectory")
    parser.add_argument("--concurrency", type=int, default=16, help="judge calls in flight (proofgym)")
    parser.add_argument("--trajectories", type=int, default=64, help="trajectories per step")
    parser.add_argument("--group-size", type=int, default=8, help="trajectories per GRPO group")
    parser.add_argument("--repeat-share", type=float, default=0.5, help="share of groups with repeated completions")
    parser.add_argument("--variants", type=int, default=2, help="distinct completions in a repeating group")
    parser.add_argument("--naive-trajectories", type=int, default=4, help="trajectories the naive row judges")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (the median is printed)")
    args = parser.parse_args()
    if args.trajectories % args.group_size:
        parser.error("--trajectories must be a multiple of --group-size")

    with FakeJudgeServer(Latency(rubric(args.criteria), delay_s=args.latency)) as server:
        rows: list[tuple[str, int, Callable[[int], tuple[float, int]]]] = [
            ("naive: a call per criterion, one at a time", args.naive_trajectories,
             lambda r: naive(server, step(args, r, 0.0)[:args.naive_trajectories])),
            (f"proofgym: one call, {args.concurrency} in flight, distinct", args.trajectories,
             lambda r: proofgym(server, step(args, r, 0.0), args.concurrency)),
            (f"proofgym: + GRPO repetition {args.repeat_share:.0%} of groups", args.trajectories,
             lambda r: proofgym(server, step(args, r, args.repeat_share), args.concurrency)),
        ]
        distinct = len({i.candidate for i in step(args, 0, args.repeat_share)})
        print(f"{args.criteria} LLM criteria per trajectory; {args.latency * 1000:.0f} ms per judge call; "
              f"step: {args.trajectories} trajectories in groups of {args.group_size} ({distinct} distinct with "
              f"repetition); median of {args.repeats} runs\n")
        header = f"{'row':<50} {'trajectories':>12} {'traj/s':>8} {'calls':>6} {'wall s':>7} {'speed-up':>9}"
        print(header)
        print("-" * len(header))
        rates = []
        for index, (label, count, run) in enumerate(rows):
            results = [run(index * 1000 + r) for r in range(args.repeats)]
            seconds = statistics.median(s for s, _ in results)
            calls = results[-1][1]
            rates.append(count / seconds)
            print(f"{label:<50} {count:>12} {rates[-1]:>8.2f} {calls:>6} {seconds:>7.2f} "
                  f"{rates[-1] / rates[0]:>8.1f}x")
        print(f"\nspeed-up over naive: {rates[2] / rates[0]:.1f}x with GRPO repetition (target >= 20x), "
              f"{rates[1] / rates[0]:.1f}x without; most calls in flight at once: {server.max_in_flight}")
        ideal = 1 / (args.criteria * args.latency)  # naive with no HTTP or client overhead at all
        print(f"against an overhead-free naive client ({ideal:.2f} traj/s): {rates[2] / ideal:.1f}x with repetition, "
              f"{rates[1] / ideal:.1f}x without")


if __name__ == "__main__":
    main()
