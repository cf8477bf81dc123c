"""How many trajectories per second can an LLM judge score, and how close do its calls in flight come to the ideal?

A fake judge model (``tests/judges/_fake_judges.py``: a real OpenAI-compatible HTTP server on loopback, in a process
of its own as a model server is, so its threads do not share the judge's GIL) takes ``--latency`` seconds per call
(default 200 ms) whatever it is asked, and answers valid verdicts. Every trajectory is judged on a rubric of
``--criteria`` LLM criteria (default 4). Rows, in one run of this script:

- naive: one call per criterion, one at a time, no cache (what a loop over criteria with a chat client does);
  measured over the first ``--naive-trajectories`` trajectories (it is strictly sequential, so its rate does not
  depend on how many it is given, and the full step would take minutes);
- proofgym, 1 in flight: :class:`~proofgym.judges.LLMJudge`, all criteria in one call, one call at a time (the
  sequential loop the calls in flight are measured against), over the first ``--sequential-trajectories``;
- proofgym, distinct: the same with ``--concurrency`` calls in flight, a cold cache, every trajectory distinct;
- proofgym, GRPO repetition: the same, on a step of ``--trajectories`` trajectories in groups of ``--group-size``
  where ``--repeat-share`` of the groups hold only ``--variants`` distinct completions (a group of an easy prompt
  whose completions agree), judged once each by in-batch de-duplication;
- bare client: the distinct row's requests sent by a bare asyncio HTTP/1.1 client (no httpx, no judge, nothing
  parsed but the JSON), ``--concurrency`` in flight: what this machine and the fake server allow.

Each figure is the median of ``--repeats`` runs (each proofgym run with a fresh judge: a cold cache). Printed per
row: trajectories per second, calls the model received, wall seconds, CPU-seconds of this process (the server's are
its own process's), the ideal wall time (``ceil(calls / in flight) * latency``: the model's latency and nothing
else) and the share of it reached, and the speed-up over naive. Then: the calls in flight against the sequential
loop (ideal: ``--concurrency`` x), and the most calls the server had in flight at once. ``--split`` adds where the
time went, from the server's record of each request (when it was read and answered, on which connection): the
start-up before the first request, the server's own time beyond the latency, the turnaround between an answer and
the next request on a connection (response transit, parsing, the next question, request transit) and the tail after
the last answer. Targets: >= 20x over naive; the calls in flight as close to the ideal as the bare client gets.

``--baseline-src DIR`` runs every proofgym row also with another checkout's ``src`` (a ``git worktree`` of an older
commit), each run of either tree in a fresh process (after a warm-up judge there: a process's first judge pays its
imports and first uses, once), the two alternating run by run, and prints the ratios.

    python benchmarks/judge_throughput.py [--repeats 3] [--latency 0.2] [--concurrency 16] [--trajectories 64] [--split]
        [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from judges._fake_judges import FakeJudgeProcess, Latency  # noqa: E402  (the fake judge model the tests use)

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


@dataclass
class Run:
    """One timed run: wall and CPU seconds, the calls the model received, the most in flight at once, and the
    server's record of each request (connection, read, answered) with the run's start and end on the same clock."""

    wall_s: float
    cpu_s: float
    calls: int
    in_flight: int
    timeline: list[tuple[int, float, float | None]]
    started: float
    ended: float


def timed(server: FakeJudgeProcess, work: Callable[[], None]) -> Run:
    server.reset()
    cpu, started, wall = time.process_time(), time.monotonic(), time.perf_counter()
    work()
    wall, cpu, ended = time.perf_counter() - wall, time.process_time() - cpu, time.monotonic()
    return Run(wall, cpu, server.calls, server.max_in_flight, server.timeline(), started, ended)


def naive(server: FakeJudgeProcess, items: list[JudgeItem]) -> Run:
    """One POST per criterion, one at a time."""
    def work() -> None:
        with httpx.Client(base_url=server.base_url, timeout=60) as client:
            for item in items:
                for criterion in item.rubric.criteria:
                    response = client.post("/chat/completions", json={
                        "model": "judge", "temperature": 0.0, "messages": build_messages(item, [criterion])})
                    response.raise_for_status()
    return timed(server, work)


def proofgym(server: FakeJudgeProcess, items: list[JudgeItem], concurrency: int) -> Run:
    """A fresh LLMJudge over the whole step (its construction is not timed)."""
    judge = LLMJudge(server.base_url, "judge", runtime=RuntimeConfig(max_concurrency=concurrency, timeout_s=60))
    verdicts = []
    try:
        run = timed(server, lambda: verdicts.extend(judge.judge_sync(items)))
    finally:
        judge.close()
    invalid = [v.reason for v in verdicts if not v.valid]
    if invalid:
        raise SystemExit(f"the judge gave {len(invalid)} invalid verdicts, e.g. {invalid[0]}")
    return run


def proofgym_in(src: Path, server: FakeJudgeProcess, args: argparse.Namespace, run: int, repeat_share: float,
                count: int, concurrency: int) -> Run:
    """:func:`proofgym` in a fresh process importing proofgym from ``src`` (this script's ``--child`` mode)."""
    spec = {"url": server.base_url, "run": run, "repeat_share": repeat_share, "count": count,
            "concurrency": concurrency}
    command = [sys.executable, __file__, "--child", json.dumps(spec), "--criteria", str(args.criteria),
               "--trajectories", str(args.trajectories), "--group-size", str(args.group_size),
               "--variants", str(args.variants)]
    server.reset()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise SystemExit(f"the judge run with {src} failed:\n{done.stderr[-2000:]}")
    child = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(child["proofgym"]).resolve() != (src / "proofgym").resolve():
        raise SystemExit(f"the run meant for {src} imported proofgym from {child['proofgym']}")
    timeline = [entry for entry in server.timeline() if entry[1] >= child["started"]]  # not the warm-up's
    return Run(child["wall_s"], child["cpu_s"], len(timeline), most_in_flight(timeline), timeline,
               child["started"], child["ended"])


def most_in_flight(timeline: list[tuple[int, float, float | None]]) -> int:
    """The most requests the server held at once, from its record."""
    events = sorted([(received, 1) for _, received, _ in timeline]
                    + [(answered, -1) for _, _, answered in timeline if answered is not None])
    most = now = 0
    for _, change in events:
        now += change
        most = max(most, now)
    return most


def child_run(args: argparse.Namespace) -> None:
    """``--child``: one timed judge run, printed as JSON (the server is the parent's), after a warm-up judge on other
    items (what a process pays once, imports and first uses, is not charged to the run, as in this process's own
    rows after their first run)."""
    import proofgym

    spec = json.loads(args.child)
    with LLMJudge(spec["url"], "judge", runtime=RuntimeConfig(max_concurrency=spec["concurrency"])) as warm:
        warm.judge_sync(step(args, spec["run"] + 500, 0.0)[:spec["concurrency"]])
    items = step(args, spec["run"], spec["repeat_share"])[:spec["count"]]
    judge = LLMJudge(spec["url"], "judge", runtime=RuntimeConfig(max_concurrency=spec["concurrency"], timeout_s=60))
    try:
        cpu, started, wall = time.process_time(), time.monotonic(), time.perf_counter()
        verdicts = judge.judge_sync(items)
        wall, cpu, ended = time.perf_counter() - wall, time.process_time() - cpu, time.monotonic()
    finally:
        judge.close()
    invalid = [v.reason for v in verdicts if not v.valid]
    if invalid:
        raise SystemExit(f"the judge gave {len(invalid)} invalid verdicts, e.g. {invalid[0]}")
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "started": started, "ended": ended,
                      "proofgym": str(Path(proofgym.__file__).parent)}))


def bare(server: FakeJudgeProcess, items: list[JudgeItem], concurrency: int) -> Run:
    """The same questions as the judge asks, POSTed by a bare asyncio HTTP/1.1 client, ``concurrency`` at a time."""
    bodies = [json.dumps({"model": "judge", "temperature": 0.0, "messages": build_messages(item, item.rubric.criteria)})
              .encode() for item in items]
    parts = urlsplit(server.url)

    async def worker(queue: list[bytes]) -> None:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            while queue:
                body = queue.pop()
                writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (parts.netloc.encode(), len(body), body))
                head = await reader.readuntil(b"\r\n\r\n")
                size = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                            if line.lower().startswith(b"content-length:"))
                answer = json.loads(await reader.readexactly(size))
                if not head.startswith(b"HTTP/1.1 200") or "choices" not in answer:
                    raise SystemExit(f"the bare client got {head.splitlines()[0]!r}")
        finally:
            writer.close()

    async def main() -> None:
        queue = list(reversed(bodies))
        await asyncio.gather(*(worker(queue) for _ in range(min(concurrency, len(bodies)))))

    return timed(server, lambda: asyncio.run(main()))


def split(run: Run, latency: float) -> str:
    """Where ``run``'s wall time went, from the server's record (see the module docstring)."""
    done = [(c, r, a) for c, r, a in run.timeline if a is not None]
    if not done:
        return "  (no request was answered)"
    by_connection: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for connection, received, answered in sorted(done, key=lambda entry: entry[1]):
        by_connection[connection].append((received, answered))
    gaps = [later[0] - earlier[1] for calls in by_connection.values() for earlier, later in zip(calls, calls[1:])]
    server = [answered - received - latency for _, received, answered in done]
    last = max(by_connection.values(), key=lambda calls: calls[-1][1])  # the connection that answered last
    startup = min(received for _, received, _ in done) - run.started
    ms = 1000.0
    lines = [
        f"  start-up (call -> first request read): {startup * ms:6.1f} ms",
        f"  server beyond the latency: median {statistics.median(server) * ms:.1f} ms, max {max(server) * ms:.1f} ms",
        "  turnaround on a connection (answer written -> next request read): "
        + (f"median {statistics.median(gaps) * ms:.1f} ms, max {max(gaps) * ms:.1f} ms over {len(gaps)}"
           if gaps else "none (one call per connection)"),
        f"  tail (last answer written -> returned): {(run.ended - max(a for _, _, a in done)) * ms:6.1f} ms",
        f"  the connection answering last: {len(last)} calls; start-up {(last[0][0] - run.started) * ms:.1f} ms + "
        f"latency {len(last) * latency * ms:.0f} ms + server {sum(a - r - latency for r, a in last) * ms:.1f} ms + "
        f"turnarounds {sum(b[0] - a[1] for a, b in zip(last, last[1:])) * ms:.1f} ms + tail "
        f"{(run.ended - last[-1][1]) * ms:.1f} ms = {(run.ended - run.started) * ms:.1f} ms wall",
        f"  connections: {len(by_connection)}; CPU of this process per call: "
        f"{run.cpu_s / max(1, len(done)) * ms:.2f} ms",
    ]
    return "\n".join(lines)


def median_run(runs: list[Run]) -> Run:
    """The run of median wall time (the lower middle of an even count), for a coherent split."""
    return sorted(runs, key=lambda run: run.wall_s)[(len(runs) - 1) // 2]


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
    parser.add_argument("--sequential-trajectories", type=int, default=8,
                        help="trajectories the 1-in-flight row judges")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (the median is printed)")
    parser.add_argument("--split", action="store_true", help="print where the time went (see the docstring)")
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src to run the proofgym rows with too")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one judge run in a fresh process (--baseline-src)
    args = parser.parse_args()
    if args.child:
        child_run(args)
        return
    if args.baseline_src is not None and not (args.baseline_src / "proofgym" / "__init__.py").is_file():
        parser.error(f"--baseline-src must be a checkout's src folder holding proofgym/, got {args.baseline_src}")
    if args.trajectories % args.group_size:
        parser.error("--trajectories must be a multiple of --group-size")
    for name in ("latency", "concurrency", "trajectories", "repeats", "naive_trajectories", "sequential_trajectories"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")

    conc = args.concurrency
    with FakeJudgeProcess(Latency, rubric(args.criteria), args.latency) as server:
        here = Path(__file__).resolve().parent.parent / "src"

        def judged(share: float, count: int, in_flight: int, src: Path | None = None) -> Callable[[int], Run]:
            if src is None and args.baseline_src is None:  # in this process
                return lambda r: proofgym(server, step(args, r, share)[:count], in_flight)
            return lambda r: proofgym_in(src or here, server, args, r, share, count, in_flight)

        def baseline(share: float, count: int, in_flight: int) -> Callable[[int], Run] | None:
            return None if args.baseline_src is None else judged(share, count, in_flight, args.baseline_src)

        seq, full = args.sequential_trajectories, args.trajectories
        # label, trajectories, in flight, one run, one run of the baseline's src (or None)
        rows: list[tuple[str, int, int, Callable[[int], Run], Callable[[int], Run] | None]] = [
            ("naive: a call per criterion, one at a time", args.naive_trajectories, 1,
             lambda r: naive(server, step(args, r, 0.0)[:args.naive_trajectories]), None),
            ("proofgym: one call, 1 in flight", seq, 1, judged(0.0, seq, 1), baseline(0.0, seq, 1)),
            (f"proofgym: one call, {conc} in flight, distinct", full, conc, judged(0.0, full, conc),
             baseline(0.0, full, conc)),
            (f"proofgym: + GRPO repetition {args.repeat_share:.0%} of groups", full, conc,
             judged(args.repeat_share, full, conc), baseline(args.repeat_share, full, conc)),
            (f"bare asyncio client, {conc} in flight, distinct", full, conc,
             lambda r: bare(server, step(args, r, 0.0), conc), None),
        ]
        distinct = len({i.candidate for i in step(args, 0, args.repeat_share)})
        print(f"{args.criteria} LLM criteria per trajectory; {args.latency * 1000:.0f} ms per judge call; "
              f"step: {args.trajectories} trajectories in groups of {args.group_size} ({distinct} distinct with "
              f"repetition); median of {args.repeats} runs; the fake judge server in its own process\n")
        header = (f"{'row':<50} {'traj':>5} {'traj/s':>7} {'calls':>6} {'wall s':>7} {'CPU-s':>6} {'ideal s':>7} "
                  f"{'of ideal':>8} {'speed-up':>8}")
        print(header)
        print("-" * len(header))
        rates, medians, ideals = [], [], []
        compared = []  # (label, this tree's median wall and CPU, the baseline's)

        def show(label: str, count: int, in_flight: int, runs: list[Run]) -> tuple[float, float, float]:
            wall = statistics.median(r.wall_s for r in runs)
            cpu = statistics.median(r.cpu_s for r in runs)
            calls = runs[-1].calls
            ideal = math.ceil(calls / in_flight) * args.latency
            rate = count / wall
            print(f"{label:<50} {count:>5} {rate:>7.2f} {calls:>6} {wall:>7.3f} {cpu:>6.3f} {ideal:>7.2f} "
                  f"{ideal / wall:>8.0%} {rate / (rates[0] if rates else rate):>7.1f}x")
            return rate, wall, cpu

        for index, (label, count, in_flight, run, run_baseline) in enumerate(rows):
            runs, base = [], []
            for r in range(args.repeats):  # the two trees alternate run by run
                runs.append(run(index * 1000 + r))
                if run_baseline is not None:
                    base.append(run_baseline(index * 1000 + r))
            rate, wall, cpu = show(label, count, in_flight, runs)
            rates.append(rate)
            medians.append(median_run(runs))
            ideals.append(math.ceil(runs[-1].calls / in_flight) * args.latency)
            if base:
                _, base_wall, base_cpu = show("  the same, --baseline-src", count, in_flight, base)
                compared.append((label, wall, cpu, base_wall, base_cpu))

        naive_rate, sequential, distinct_rate, repeated, floor = rates
        ideal_gain = min(conc, medians[2].calls)
        print(f"\n{conc} in flight against 1 in flight (both proofgym, distinct): {distinct_rate / sequential:.1f}x "
              f"(ideal {ideal_gain}x: {distinct_rate / sequential / ideal_gain:.0%} of it)")
        print(f"{conc} in flight against the ideal wall ({ideals[2]:.2f} s): proofgym "
              f"{ideals[2] / medians[2].wall_s:.0%}, the bare client {ideals[4] / medians[4].wall_s:.0%} (what this "
              f"machine and server allow: {floor / distinct_rate:.2f}x proofgym's rate); most calls in flight at "
              f"once: {max(r.in_flight for r in medians[2:4])}")
        print(f"speed-up over naive: {repeated / naive_rate:.1f}x with GRPO repetition (target >= 20x), "
              f"{distinct_rate / naive_rate:.1f}x without")
        overhead_free = 1 / (args.criteria * args.latency)  # naive with no HTTP or client overhead at all
        print(f"against an overhead-free naive client ({overhead_free:.2f} traj/s): "
              f"{repeated / overhead_free:.1f}x with repetition, {distinct_rate / overhead_free:.1f}x without")
        if compared:
            print(f"\nthis tree against --baseline-src {args.baseline_src} (each run in a fresh process after a "
                  "warm-up judge, the trees alternating):")
            for label, wall, cpu, base_wall, base_cpu in compared:
                print(f"  {label}: wall {base_wall / wall:.2f}x faster ({base_wall:.3f} -> {wall:.3f} s), "
                      f"CPU {base_cpu / cpu:.2f}x less ({base_cpu:.3f} -> {cpu:.3f} CPU-s)")
        if args.split:
            for label, index in (("proofgym, 1 in flight", 1), ("proofgym, distinct", 2), ("bare client", 4)):
                print(f"\nwhere the time went, {label} (its median run, {medians[index].calls} calls, "
                      f"{medians[index].in_flight} in flight at most):")
                print(split(medians[index], args.latency))
    sys.stdout.flush()


if __name__ == "__main__":
    from _record import record

    record("judge_throughput", main)
