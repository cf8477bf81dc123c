"""What does the task app cost on top of the environment it serves?

A real task app (``proofgym serve`` under uvicorn, in its own process, on loopback) runs scripted
rollouts sent at 1, 16 and 64 concurrent rollouts, with one worker process and with ``--workers``
(default: one per core); every rollout's session is committed to the app's SQLite trace store before
its response. The load generator is a lean HTTP/1.1 keep-alive client (``--client httpx`` uses httpx,
which itself spends about 1 ms of CPU per request on this machine). Two cheap environments, so that
the app's own cost is visible:

- ``grant``: ``grant_eligibility``, one step (the gold answer, scored by the rule kernel);
- ``verilog``: ``verilog``, ``--steps`` scripted ``write_file`` steps (no judge run).

Baseline, measured in the same run: the environment's own time for the same rollout, in-process and
sequential (``make`` + ``reset`` + every ``step`` + ``close``); at concurrency 1 it is measured for
each seed just before its request (the Verilog steps write files: disk latency varies over time), and
``env ms`` is its median over the run. Per row:

- ``rollouts/s`` and ``steps/s``: throughput at that concurrency;
- ``p50 ms``: the median request latency;
- ``overhead/step``: (latency - environment time of the same rollout) / steps, the median over the
  requests: what the HTTP round trip, the app, the rollout loop and the trace store's commit add per
  step, as a client sees it. At concurrency 1 that is the overhead itself (the goal's figure); above,
  it is p50 latency - the median environment time, which also holds the time a request waits behind
  the others (the cores are shared), so it grows with concurrency;
- ``app CPU ms``: CPU time (user + system, all the app's processes) per rollout. Flat across
  concurrency and workers means the app's throughput is bound only by the cores it gets;
- ``CPU overhead/step``: (app CPU per rollout - environment time) / steps: what the app costs per
  step in CPU at any concurrency (the environment's own work is CPU-bound here), free of queueing;
- ``app cores`` and ``client cores``: the cores the app and the load generator kept busy. Where
  their sum reaches the core count, the machine, not the app, is the limit;
- ``scaling``: throughput over throughput with one worker at concurrency 1, against the ideal
  min(concurrency, cores). One worker is one Python process: about one core at most.

Then the trace store alone: ``--store-sessions`` recorded Verilog sessions written through a
``TraceWriter`` into a fresh SQLite file: sessions/s and events/s (an event: a step, its environment
event, each LM call, verification and event reward). Every figure is the median of ``--runs`` runs.
Goals: overhead under 2 ms per step at p50; near-linear scaling up to the core count.

``--baseline-src DIR`` (a ``src`` folder of another proofgym checkout, e.g. a ``git worktree`` of an older
commit) serves every row twice, from this tree and from that one, alternating run by run so that both see
the same machine, and prints each row for both plus the ratios (this tree / baseline) of the overheads.
Those wall-clock and CPU-time ratios swing by 10-40 % between identical runs on a shared 2-core machine;
``--instructions`` (valgrind) then also counts, in the same run, the instructions of a request, of its
environment work and of the overhead for both trees (``benchmarks/task_app_instructions.py``): a ratio that
machine noise does not move.

    python benchmarks/task_app.py [--runs 3] [--rollouts 64] [--steps 8] [--concurrency 1 16 64] [--workers N]
                                  [--client lean|httpx] [--scenario grant verilog] [--baseline-src DIR]
                                  [--instructions]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import httpx

from proofgym.domains import gold_completion
from proofgym.envs import make
from proofgym.traces import SessionTrace, TraceStore, TraceWriter

DESIGN = "module TopModule(input a, input b, output out);\n  assign out = a & b;\nendmodule\n"


def scenarios(steps: int) -> dict[str, dict[str, Any]]:
    """Per scenario: the environment, its config and, per seed, the scripted actions."""
    grant = make("grant_eligibility")

    def grant_actions(seed: int) -> list[Any]:
        grant.reset(seed)
        return [{"tool": "answer", "args": {"completion": gold_completion(grant.domain, grant.record)}}]

    write = {"tool": "write_file", "args": {"path": "top.v", "content": DESIGN}}
    return {
        "grant (1 step)": {"env": "grant_eligibility", "config": {}, "actions": grant_actions},
        f"verilog ({steps} steps)": {"env": "verilog", "config": {"problem_id": "Prob001_and_gate",
                                                                  "max_turns": steps},
                                     "actions": lambda seed: [write] * steps},
    }


def env_seconds(scenario: dict[str, Any], seed: int) -> float:
    """Seconds of one rollout's environment work, in-process: make, reset, the steps, close."""
    actions = scenario["actions"](seed)
    started = time.perf_counter()
    with make(scenario["env"], **scenario["config"]) as env:
        env.reset(seed)
        for action in actions:
            if env.step(action).done:
                break
    return time.perf_counter() - started


def env_time(scenario: dict[str, Any], seeds: range) -> float:
    """Median seconds of one rollout's environment work."""
    return statistics.median(env_seconds(scenario, seed) for seed in seeds)


class App:
    """``proofgym serve`` in a subprocess (``workers`` processes), on a free port, with a fresh trace store."""

    def __init__(self, env_name: str, config: dict[str, Any], folder: Path, workers: int,
                 source: Path | None = None) -> None:
        environ = {**os.environ, "ENVIRONMENT_API_KEY": "bench"}
        if source is not None:  # another version of proofgym (``--baseline-src``) serves instead of this one
            environ["PYTHONPATH"] = os.pathsep.join([str(source), *filter(None, [os.environ.get("PYTHONPATH")])])
        command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve", env_name, "--port", "0",
                   "--traces", str(folder / f"{uuid.uuid4().hex}.db"), "--max-concurrency", "64",
                   "--env-config", json.dumps(config), "--workers", str(workers)]
        self.process = subprocess.Popen(command, env=environ, stderr=subprocess.PIPE, text=True)
        self.url = None
        assert self.process.stderr is not None
        for line in self.process.stderr:
            found = re.search(r"Uvicorn running on (http://\S+)", line)
            if found:
                self.url = found.group(1)
                break
        if self.url is None:
            raise RuntimeError("the task app did not start")
        # Keep reading its log so that the pipe never fills and blocks the app.
        threading.Thread(target=self.process.stderr.read, daemon=True).start()
        deadline = time.monotonic() + 60  # with several workers the port is bound before they listen
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the task app did not become healthy")
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) used so far by the app's processes: the server and its workers."""
        return sum(_cpu_seconds(pid) for pid in _process_tree(self.process.pid))

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # the fields after the command name


def _process_tree(root: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                parents[int(entry)] = int(fields[1])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def _cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


class Connection:
    """A lean HTTP/1.1 keep-alive client (asyncio streams): the load generator shares the machine with
    the app, so it should cost as little of it as it can (httpx costs about 1 ms of CPU per request).
    ``--client httpx`` measures with httpx instead."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Connection:
        parts = httpx.URL(url)
        reader, writer = await asyncio.open_connection(parts.host, parts.port)
        return cls(reader, writer, f"{parts.host}:{parts.port}")

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(b"POST %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: bench\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (path.encode(), self.host.encode(), len(body), body))
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(b":", 1)[1]) for line in lines[1:] if line.lower().startswith(b"content-length:"))
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def load(url: str, scenario: dict[str, Any], concurrency: int, rollouts: int, cpu: Callable[[], float],
               client: str = "lean", paired: list[float] | None = None) -> tuple[float, list[float], float, float]:
    """Send ``rollouts`` rollouts, ``concurrency`` at a time: (wall seconds, per-request latencies, CPU
    seconds the app used meanwhile (by ``cpu()``), CPU seconds this load generator used).

    With ``paired`` (concurrency 1), the environment's own time for each seed is measured in-process
    just before its request and appended there, so both see the same machine (disk, load).
    """
    bodies = [json.dumps({"run_id": "bench", "env": {"seed": seed},
                          "policy": {"policy_name": "scripted", "config": {"actions": scenario["actions"](seed)}}}
                         ).encode() for seed in range(rollouts)]
    latencies: list[float] = []
    queue = list(reversed(bodies))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": "bench", "Content-Type": "application/json"},
                                 timeout=300, limits=limits) as pool:

        async def send_httpx(body: bytes) -> tuple[int, bytes]:
            response = await pool.post("/rollout", content=body)
            return response.status_code, response.content

        # Opened all at once, as a trainer's connection pool does when it starts.
        connections = (list(await asyncio.gather(*(Connection.open(url) for _ in range(concurrency))))
                       if client == "lean" else [None] * concurrency)

        def sender(connection: Connection | None) -> Any:
            return send_httpx if connection is None else (lambda body: connection.post("/rollout", body))

        async def worker(connection: Connection | None) -> None:
            send = sender(connection)
            while queue:
                body = queue.pop()
                if paired is not None:
                    paired.append(env_seconds(scenario, json.loads(body)["env"]["seed"]))
                started = time.perf_counter()
                status, content = await send(body)
                latencies.append(time.perf_counter() - started)
                if status != 200 or json.loads(content)["status"] != "ok":
                    raise RuntimeError(f"rollout failed: {status} {content[:300]!r}")

        try:
            # Warm: imports, the first env, the run's row, each connection.
            await asyncio.gather(*(sender(connection)(bodies[0]) for connection in connections))
            cpu_before, own_before = cpu(), time.process_time()
            started = time.perf_counter()
            await asyncio.gather(*(worker(connection) for connection in connections))
            wall = time.perf_counter() - started
            return wall, latencies, cpu() - cpu_before, time.process_time() - own_before
        finally:
            for connection in connections:
                if connection is not None:
                    connection.close()


def store_rate(sessions: list[SessionTrace], runs: int, folder: Path) -> tuple[float, float, int]:
    """Median sessions/s and events/s writing ``sessions`` through a TraceWriter into a fresh SQLite store."""
    events = sum(1 + (step.env_event is not None) + len(step.lm_calls) + (step.verification is not None)
                 + len(step.event_rewards) for session in sessions for step in session.steps)
    rates = []
    for _ in range(runs):
        with TraceStore(folder / f"{uuid.uuid4().hex}.db") as store:
            run_id = store.start_run(kind="bench")
            batch = [replace(session, session_id=uuid.uuid4().hex, run_id=run_id) for session in sessions]
            started = time.perf_counter()
            with TraceWriter(store) as writer:
                for session in batch:
                    writer.submit(session)
            rates.append(time.perf_counter() - started)
    elapsed = statistics.median(rates)
    return len(sessions) / elapsed, events / elapsed, events


def recorded_sessions(scenario: dict[str, Any], count: int) -> list[SessionTrace]:
    from proofgym.policies import ScriptedPolicy
    from proofgym.rollouts import run_rollout

    async def main() -> list[SessionTrace]:
        results = [await run_rollout(scenario["env"], seed=seed, policy=ScriptedPolicy(scenario["actions"](seed)),
                                     env_config=scenario["config"]) for seed in range(min(count, 16))]
        return [results[i % len(results)].session for i in range(count)]

    return asyncio.run(main())


class _Row:
    """The runs of one row (scenario, workers, concurrency) against one app, and their medians."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.p50s: list[float] = []
        self.overheads: list[float] = []
        self.envs: list[float] = []
        self.cpus: list[float] = []
        self.app_cores: list[float] = []
        self.client_cores: list[float] = []
        self.rollouts = 0

    def measure(self, app: App, scenario: dict[str, Any], concurrency: int, rollouts: int, client: str) -> None:
        paired: list[float] | None = [] if concurrency == 1 else None
        wall, latencies, cpu, own = asyncio.run(load(app.url, scenario, concurrency, rollouts, app.cpu_seconds,
                                                     client, paired))
        self.p50s.append(statistics.median(latencies))
        self.cpus.append(cpu / rollouts)
        self.app_cores.append(cpu / wall)
        self.client_cores.append(own / wall)
        if paired is not None:
            wall -= sum(paired)  # the wall clock of the loop includes the paired environment runs
            self.overheads.append(statistics.median(lat - env for lat, env in zip(latencies, paired)))
            self.envs.extend(paired)
        self.walls.append(wall)
        self.rollouts = rollouts

    def figures(self, baseline: float, steps: int) -> dict[str, float]:
        p50 = statistics.median(self.p50s)
        env_ms = (statistics.median(self.envs) if self.envs else baseline) * 1e3
        cpu_ms = statistics.median(self.cpus) * 1e3
        return {"throughput": self.rollouts / statistics.median(self.walls), "p50_ms": p50 * 1e3, "env_ms": env_ms,
                "overhead_ms": (statistics.median(self.overheads) if self.overheads else p50 - baseline) / steps * 1e3,
                "cpu_ms": cpu_ms, "cpu_overhead_ms": (cpu_ms - env_ms) / steps,
                "app_cores": statistics.median(self.app_cores), "client_cores": statistics.median(self.client_cores)}


def _ratio(now: dict[str, float], then: dict[str, float], key: str) -> str:
    return f"{now[key]:.3f} / {then[key]:.3f} ms = {now[key] / then[key]:.3f}x" if then[key] > 0 else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rollouts", type=int, default=64, help="rollouts per run (at least 2 x concurrency)")
    parser.add_argument("--steps", type=int, default=8, help="write_file steps per Verilog rollout")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--store-sessions", type=int, default=512)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="also measure an app of this many worker processes (default: the core count)")
    parser.add_argument("--client", choices=["lean", "httpx"], default="lean",
                        help="the load generator's HTTP client (default: a lean keep-alive client)")
    parser.add_argument("--scenario", choices=["grant", "verilog"], nargs="+", default=["grant", "verilog"])
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="also serve from this proofgym src folder, alternating runs, and print the ratios")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per request and per overhead (callgrind), for both trees")
    args = parser.parse_args()
    if args.baseline_src is not None and not (args.baseline_src / "proofgym" / "__init__.py").is_file():
        parser.error(f"--baseline-src {args.baseline_src}: expected a src folder holding proofgym/__init__.py")
    versions: dict[str, Path | None] = {"this tree": None}
    if args.baseline_src is not None:
        versions["baseline"] = args.baseline_src.resolve()
    cores = os.cpu_count() or 1
    print(f"task app benchmark: {cores} cores, {args.runs} runs per row, medians; {args.client} client on the "
          "same machine")
    width = 20 if len(versions) == 1 else 30
    header = (f"{'scenario':<{width}} {'workers':>7} {'conc':>4} {'rollouts/s':>10} {'steps/s':>9} {'p50 ms':>8} "
              f"{'env ms':>7} {'overhead/step':>13} {'app CPU ms':>10} {'CPU overhead/step':>17} {'app cores':>9} "
              f"{'client cores':>12} {'scaling':>13}")
    print(header)
    print("-" * len(header))
    setups = [(1, c) for c in args.concurrency]
    if args.workers > 1:
        setups += [(args.workers, c) for c in args.concurrency if c > 1]
    with tempfile.TemporaryDirectory() as folder:
        folder_path = Path(folder)
        for name, scenario in scenarios(args.steps).items():
            if name.split()[0] not in args.scenario:
                continue
            steps = len(scenario["actions"](0))
            env_time(scenario, range(32))  # warm: the first builds compile, import and fill caches
            baseline = env_time(scenario, range(32, 96))
            first = None
            for workers in sorted({w for w, _ in setups}):
                apps = {label: App(scenario["env"], scenario["config"], folder_path, workers, source)
                        for label, source in versions.items()}
                try:
                    for concurrency in [c for w, c in setups if w == workers]:
                        rows = {label: _Row() for label in apps}
                        for _ in range(args.runs):
                            for label, app in apps.items():  # alternating: every version sees the same machine
                                rows[label].measure(app, scenario, concurrency, max(args.rollouts, 2 * concurrency),
                                                    args.client)
                        figures = {}
                        for label, row in rows.items():
                            figures[label] = row.figures(baseline, steps)
                            throughput = figures[label]["throughput"]
                            if label == "this tree":
                                first = first or throughput
                            shown = name if len(versions) == 1 else f"{name} [{label}]"
                            f = figures[label]
                            print(f"{shown:<{width}} {workers:>7} {concurrency:>4} {throughput:>10.1f} "
                                  f"{throughput * steps:>9.0f} {f['p50_ms']:>8.2f} {f['env_ms']:>7.2f} "
                                  f"{f['overhead_ms']:>10.2f} ms {f['cpu_ms']:>10.2f} "
                                  f"{f['cpu_overhead_ms']:>14.2f} ms "
                                  f"{f['app_cores']:>9.2f} {f['client_cores']:>12.2f} "
                                  f"{throughput / (first or throughput):>7.2f}x / {min(concurrency, cores)}x")
                        if "baseline" in figures:
                            now, then = figures["this tree"], figures["baseline"]
                            print(f"{'  this tree / baseline':<{width + 13}} "
                                  f"overhead/step {_ratio(now, then, 'overhead_ms')}, "
                                  f"CPU overhead/step {_ratio(now, then, 'cpu_overhead_ms')}, "
                                  f"throughput {now['throughput'] / then['throughput']:.3f}x")
                finally:
                    for app in apps.values():
                        app.close()
        if "verilog" in args.scenario:
            verilog = list(scenarios(args.steps).values())[1]
            sessions = recorded_sessions(verilog, args.store_sessions)
            per_s, events_per_s, events = store_rate(sessions, args.runs, folder_path)
            print(f"\ntrace store (SQLite, TraceWriter batches): {len(sessions)} sessions, {events} events: "
                  f"{per_s:,.0f} sessions/s, {events_per_s:,.0f} events/s")
    if args.instructions:
        from task_app_instructions import compare  # the sibling benchmark (this folder is on sys.path)

        print()
        compare(args.baseline_src, args.scenario, steps=args.steps)
    print("goal: overhead under 2 ms per step at p50 (concurrency 1); scaling near min(concurrency, cores)")


if __name__ == "__main__":
    from _record import record

    record("task_app", main)
