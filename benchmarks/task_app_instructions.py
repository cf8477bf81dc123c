"""What does one task-app request cost, in instructions: this tree against another, free of machine noise.

Wall-clock figures of ``benchmarks/task_app.py`` swing by 10-40 % between identical runs on a shared 2-core
machine. This counts CPU instructions instead (valgrind's callgrind; the same count for the same code and input,
whatever else the machine does). A child process builds the task app (``create_app``: the real FastAPI app, its
guard, rollout loop, trace store on SQLite, response) and drives it through ASGI directly (no HTTP client, no
socket: nothing but the app is counted), first with ``--warmup`` requests only, then with ``--requests`` more:
instructions per request = (second - first) / requests, so start-up and imports cancel out. Scenarios as in
``benchmarks/task_app.py``: ``grant`` (one step, the gold answer scored by the rule kernel) and ``verilog``
(``--steps`` scripted ``write_file`` steps, no judge run), scripted policy.

``--baseline-src DIR`` (the ``src`` folder of another checkout, e.g. a ``git worktree`` of an older commit)
counts the same requests served by that tree, in the same run, and prints the ratio. The issue-12 goal: the
hardened app within 5 % of 9ef59c9.

    python benchmarks/task_app_instructions.py --baseline-src ../before/src [--requests 200] [--steps 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DESIGN = "module TopModule(input a, input b, output out);\n  assign out = a & b;\nendmodule\n"


def child(scenario: str, count: int, warmup: int, steps: int) -> None:
    """Serve ``warmup + count`` rollouts of ``scenario`` through the app's ASGI interface."""
    from proofgym.domains import gold_completion
    from proofgym.envs import make
    from proofgym.serve import create_app

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


def instructions(src: Path | None, scenario: str, count: int, warmup: int, steps: int) -> int:
    """Instructions callgrind counts for the child serving ``warmup + count`` requests from tree ``src``."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryDirectory() as out:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out", sys.executable,
                   __file__, "--child", scenario, str(count), str(warmup), str(steps)]
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        found = re.search(r"Collected : (\d+)", run.stderr)
        if run.returncode != 0 or found is None:
            raise SystemExit(f"the counted run failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
        return int(found.group(1))


def per_request(src: Path | None, scenario: str, args: argparse.Namespace) -> float:
    base = instructions(src, scenario, 0, args.warmup, args.steps)
    full = instructions(src, scenario, args.requests, args.warmup, args.steps)
    return (full - base) / args.requests


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        scenario, count, warmup, steps = sys.argv[2], *map(int, sys.argv[3:6])
        child(scenario, count, warmup, steps)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--scenario", choices=["grant", "verilog"], nargs="+", default=["grant", "verilog"])
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind): it counts the instructions")
    print(f"instructions per task-app request (callgrind), {args.requests} requests after {args.warmup} warm-up, "
          "through ASGI, scripted policy, SQLite trace store")
    for scenario in args.scenario:
        name = "grant (1 step)" if scenario == "grant" else f"verilog ({args.steps} steps)"
        mine = per_request(None, scenario, args)
        line = f"{name:<20} this tree {mine / 1e6:8.3f} M"
        if args.baseline_src is not None:
            theirs = per_request(args.baseline_src.resolve(), scenario, args)
            line += f"   baseline {theirs / 1e6:8.3f} M   ratio {mine / theirs:.3f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
