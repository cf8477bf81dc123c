"""What does one task-app request cost, in instructions: this tree against another, free of machine noise.

Wall-clock figures of ``benchmarks/task_app.py`` swing by 10-40 % between identical runs on a shared 2-core
machine. This counts CPU instructions instead (valgrind's callgrind; the same count for the same code, input and
string-hash seed, whatever else the machine does). Python randomises string hashes per process, and that alone moves
a request's count by 1-2 % (dict probes collide more or less), so every count is taken under fixed
``PYTHONHASHSEED`` values (``--hash-seeds``, default 0 1 2) and the median is shown. A child process builds the task app (``create_app``: the real FastAPI app, its
guard, rollout loop, trace store on SQLite, response) and drives it through ASGI directly (no HTTP client, no
socket: nothing but the app is counted), first with ``--warmup`` requests only, then with ``--requests`` more:
instructions per request = (second - first) / requests, so start-up and imports cancel out. Scenarios as in
``benchmarks/task_app.py``: ``grant`` (one step, the gold answer scored by the rule kernel) and ``verilog``
(``--steps`` scripted ``write_file`` steps, no judge run), scripted policy.

The environment's own work for the same rollouts (``make`` + ``reset`` + every ``step`` + ``close``, in-process,
as ``benchmarks/task_app.py`` measures its baseline) is counted the same way, so that the app's *overhead* per
request (request - environment) is printed too: the figure the issue-12 goal bounds.

``--baseline-src DIR`` (the ``src`` folder of another checkout, e.g. a ``git worktree`` of an older commit)
counts the same requests served by that tree, in the same run, and prints the ratios. The issue-12 goal: the
hardened app's overhead within 5 % of 9ef59c9's.

    python benchmarks/task_app_instructions.py --baseline-src ../before/src [--requests 200] [--steps 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DESIGN = "module TopModule(input a, input b, output out);\n  assign out = a & b;\nendmodule\n"


def child(scenario: str, count: int, warmup: int, steps: int, env_only: bool = False) -> None:
    """Serve ``warmup + count`` rollouts of ``scenario`` through the app's ASGI interface (``env_only``: run
    their environment work in-process instead, with no app)."""
    from proofgym.domains import gold_completion
    from proofgym.envs import make
    from proofgym.taskapp import create_app

    if scenario == "grant":
        env, config = "grant_eligibility", {}
        grant = make(env)

        def actions(seed: int) -> list:
            grant.reset(seed)
            return [{"tool": "answer", "args": {"completion": gold_completion(grant.domain, grant.record)}}]
    else:
        env, config = "verilog", {"problem_id": "Prob001_and_gate", "max_turns": steps}
        write = {"tool": "write_file", "args": {"path": "top.v", "content": DESIGN}}

        def actions(seed: int) -> list:
            return [write] * steps

    if env_only:
        for seed in range(warmup + count):
            with make(env, **config) as rollout:
                rollout.reset(seed)
                for action in actions(seed):
                    if rollout.step(action).done:
                        break
        return
    bodies = [json.dumps({"run_id": "bench", "env": {"seed": seed, "config": config},
                          "policy": {"policy_name": "scripted", "config": {"actions": actions(seed)}}}).encode()
              for seed in range(warmup + count)]
    store = tempfile.mkdtemp(prefix="proofgym-bench-")
    try:
        kwargs = {"api_key": "bench-key", "store": os.path.join(store, "traces.db")}
        if config:
            kwargs["env_overrides"] = sorted(config)
        app = create_app(env, **kwargs)
        asyncio.run(_serve_all(app, bodies))
    finally:
        shutil.rmtree(store, ignore_errors=True)


async def _serve_all(app, bodies: list[bytes]) -> None:
    async with app.router.lifespan_context(app):
        for body in bodies:
            status = await _post(app, body)
            if status != 200:
                raise SystemExit(f"the app answered {status}")


async def _post(app, body: bytes) -> int:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/rollout", "raw_path": b"/rollout", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"app"), (b"content-type", b"application/json"), (b"x-api-key", b"bench-key"),
                         (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    sent = False
    status = 0

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


def instructions(src: Path | None, scenario: str, count: int, warmup: int, steps: int, mode: str = "--child",
                 hash_seed: int = 0) -> int:
    """Instructions callgrind counts for the child serving ``warmup + count`` requests from tree ``src``
    (``mode`` ``--env-child``: only their environment work), under string-hash seed ``hash_seed``."""
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryDirectory() as out:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out", sys.executable,
                   __file__, mode, scenario, str(count), str(warmup), str(steps)]
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        found = re.search(r"Collected : (\d+)", run.stderr)
        if run.returncode != 0 or found is None:
            raise SystemExit(f"the counted run failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
        return int(found.group(1))


def per_request(src: Path | None, scenario: str, requests: int, warmup: int, steps: int, mode: str = "--child",
                hash_seeds: tuple[int, ...] = (0, 1, 2)) -> float:
    """The median over ``hash_seeds`` of (count with ``warmup + requests`` - count with ``warmup``) / requests;
    the counted runs go in parallel, one per core (an instruction count does not depend on the machine's load)."""
    jobs = [(seed, count) for seed in hash_seeds for count in (0, requests)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counted = dict(zip(jobs, pool.map(
            lambda job: instructions(src, scenario, job[1], warmup, steps, mode, job[0]), jobs)))
    return statistics.median((counted[seed, requests] - counted[seed, 0]) / requests for seed in hash_seeds)


def compare(baseline_src: Path | None, scenarios: list[str], requests: int = 200, warmup: int = 20,
            steps: int = 8, hash_seeds: tuple[int, ...] = (0, 1, 2)) -> None:
    """Print, per scenario, the instructions of a request, of its environment work and of the app's overhead
    (the difference) for this tree and, with ``baseline_src``, for that tree with the ratios."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind): it counts the instructions")
    print(f"instructions per task-app request (callgrind), {requests} requests after {warmup} warm-up, "
          "through ASGI, scripted policy, SQLite trace store; overhead = request - environment work; "
          f"median over PYTHONHASHSEED {' '.join(map(str, hash_seeds))}")
    trees = {"this tree": None}
    if baseline_src is not None:
        trees["baseline"] = baseline_src.resolve()
    for scenario in scenarios:
        name = "grant (1 step)" if scenario == "grant" else f"verilog ({steps} steps)"
        counted = {}
        for label, src in trees.items():
            request = per_request(src, scenario, requests, warmup, steps, hash_seeds=hash_seeds)
            environment = per_request(src, scenario, requests, warmup, steps, "--env-child", hash_seeds)
            counted[label] = (request, environment, request - environment)
            print(f"{name:<20} {label:<10} request {request / 1e6:7.3f} M   environment {environment / 1e6:7.3f} M"
                  f"   overhead {(request - environment) / 1e6:7.3f} M", flush=True)
        if "baseline" in counted:
            (r1, _, o1), (r0, _, o0) = counted["this tree"], counted["baseline"]
            print(f"{name:<20} this tree / baseline: request {r1 / r0:.3f}x, overhead {o1 / o0:.3f}x", flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("--child", "--env-child"):
        scenario, count, warmup, steps = sys.argv[2], *map(int, sys.argv[3:6])
        child(scenario, count, warmup, steps, env_only=sys.argv[1] == "--env-child")
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--scenario", choices=["grant", "verilog"], nargs="+", default=["grant", "verilog"])
    parser.add_argument("--hash-seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="PYTHONHASHSEED values to count under (the median is shown)")
    args = parser.parse_args()
    compare(args.baseline_src, args.scenario, args.requests, args.warmup, args.steps, tuple(args.hash_seeds))


if __name__ == "__main__":
    from _record import record

    record("task_app_instructions", main)
