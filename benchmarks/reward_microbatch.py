"""Does ``serve-reward`` score OpenRLHF's one-sample requests as fast as one batched request? (micro-batching)

OpenRLHF 0.11.2 posts one sample per reward request. A real ``serve_reward`` (uvicorn on loopback, in a process
of its own) serves a reward path whose verifier is ``verification_overhead.RemoteStub``: every call takes
``--latency`` seconds (default 50 ms) whether it carries one claim or up to ``--max-batch`` (default 50), as a
remote batch endpoint does. Per run, with every claim distinct (nothing de-duplicated, no cache):

- many: ``--requests`` (default 256) concurrent requests of one sample each, as OpenRLHF sends them;
- one:  one request of the same number of samples.

Both against a server with micro-batching on (``--batch-window-s``, default 5 ms) and off (the baseline: each
request its own batch). Printed: the median of ``--runs`` runs (after a warm-up) of each, and many / one, the
cost of one-sample requests (and the fastest run of each against the other's: on a machine whose other load
comes and goes, the closest to the cost without it). Target: within 1.5x with micro-batching on.

The client runs on the server's machine, so its CPU competes with the server's (on 2 cores, with the server's
threads): ``--client raw`` (the default) reads each answer's head in one read, about 0.06 ms of client CPU per
one-sample request against the server's 0.2; ``aiohttp`` (OpenRLHF's library) spends about as much as the server
does. Each row also prints the CPU both spent per sample (server: user + system of its process, from /proc, in
clock ticks; client: this process), for the many requests and for the one.

    python benchmarks/reward_microbatch.py [--runs 5] [--requests 256] [--latency 0.05] \
        [--client raw|aiohttp|aiohttp-fresh]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verification_overhead import RemoteStub  # noqa: E402  (the stub verifier the overhead benchmark uses)

KEY = "bench-key"


def completion(index: int) -> str:
    """A parsable answer whose claim is distinct for every ``index`` (no two samples share a verification)."""
    return ('<decision>{"classification": "permit", "facts": {"age": %d, "annual_income": 30000, '
            '"resident": true, "has_active_grant": false}}</decision>' % (18 + index))


def serve(port: int, batch_window_s: float, args: argparse.Namespace) -> None:
    """The server process: ``serve_reward`` over the grant domain's parser and shaper, the stub as its verifier."""
    from proofgym.integrations import domain_run_config
    from proofgym.reward_server import serve_reward
    from proofgym.reward_server._app import DEFAULT_MAX_CONNECTIONS
    from proofgym.rewards import ErrorBudget, RewardFunction
    from proofgym.runtime import RuntimeConfig, VerificationRuntime

    domain_fn = domain_run_config("grant_eligibility").reward_function()
    domain_fn.close()  # its kernel runtime: only the parser and the shaper are used
    config = RuntimeConfig(max_concurrency=args.concurrency, batch_size=args.max_batch, timeout_s=30, cache_size=0)
    runtime = VerificationRuntime(RemoteStub(args.latency, args.max_batch), config)
    reward_fn = RewardFunction(domain_fn.parser, runtime, domain_fn.shaper,
                               error_budget=ErrorBudget(max_invalid_share=1.0))
    serve_reward(reward_fn, port=port, api_key=KEY, log_level="warning", batch_window_s=batch_window_s,
                 max_connections=max(DEFAULT_MAX_CONNECTIONS, 2 * args.requests))


class RawClient:
    """A minimal HTTP/1.1 client on kept-alive connections, one per concurrent request: a few microseconds of
    client CPU per request, so that the machine's cores measure the server (aiohttp spends about as much per
    request as the server does, on the same cores: ``--client aiohttp``)."""

    def __init__(self, port: int, path: str) -> None:
        self.port = port
        self.head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, body: dict) -> list[float]:
        data = json.dumps(body).encode()
        reader, writer = self.idle.pop() if self.idle else await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(self.head + b"Content-Length: %d\r\n\r\n" % len(data) + data)
        head = (await reader.readuntil(b"\r\n\r\n")).lower()  # one read of the status line and headers
        start = head.find(b"\r\ncontent-length:")
        length = int(head[start + 17:head.index(b"\r\n", start + 2)]) if start >= 0 else 0
        answer = json.loads(await reader.readexactly(length))
        if not head.startswith(b"http/1.1 200 "):
            raise RuntimeError(f"{head.splitlines()[0].decode()}: {answer}")
        self.idle.append((reader, writer))
        return answer["rewards"]

    async def close(self) -> None:
        for _, writer in self.idle:
            writer.close()


class AiohttpClient:
    """OpenRLHF's client library; ``fresh``: a session (so a connection) per request, as OpenRLHF makes."""

    def __init__(self, url: str, fresh: bool) -> None:
        import aiohttp

        self.url = url
        self.fresh = fresh
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                             timeout=aiohttp.ClientTimeout(total=180))

    async def post(self, body: dict) -> list[float]:
        import aiohttp

        if self.fresh:
            async with aiohttp.ClientSession() as own, own.post(self.url, json=body) as response:
                response.raise_for_status()
                return (await response.json())["rewards"]
        async with self.session.post(self.url, json=body) as response:
            response.raise_for_status()
            return (await response.json())["rewards"]

    async def close(self) -> None:
        await self.session.close()


async def _wait_ready(port: int, process: multiprocessing.Process) -> None:
    import aiohttp

    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as session:
        while True:
            try:
                async with session.get(f"http://127.0.0.1:{port}/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if not process.is_alive() or time.monotonic() > deadline:
                raise SystemExit(f"the reward server on port {port} did not start")
            await asyncio.sleep(0.05)


class Cpu:
    """CPU seconds spent in each mode by the client (this process) and by the server (``pid``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.client = {"many": 0.0, "one": 0.0}
        self.server: dict[str, float | None] = {"many": 0.0, "one": 0.0}

    def start(self) -> tuple[float, float | None]:
        return time.process_time(), process_cpu_s(self.pid)

    def add(self, mode: str, started: tuple[float, float | None]) -> None:
        client, server = started
        self.client[mode] += time.process_time() - client
        now = process_cpu_s(self.pid)
        total = self.server[mode]
        self.server[mode] = None if now is None or server is None or total is None else total + now - server


async def measure(port: int, args: argparse.Namespace, cpu: Cpu) -> tuple[list[float], list[float]]:
    """Seconds of each run: (many one-sample requests, one request of all the samples); CPU into ``cpu``."""
    path = f"/get_reward?key={KEY}"
    client = RawClient(port, path) if args.client == "raw" else \
        AiohttpClient(f"http://127.0.0.1:{port}{path}", args.client == "aiohttp-fresh")
    prompt = "Grant application.\n"
    n = args.requests
    many, one = [], []
    try:
        for run in range(args.runs + 1):  # run 0 warms up (connections, the server's first batches)
            base = 2 * run * n

            async def many_requests(base: int = base) -> float:
                bodies = [{"query": [prompt + completion(base + i)], "prompts": [prompt]} for i in range(n)]
                used, start = cpu.start(), time.perf_counter()
                rewards = await asyncio.gather(*(client.post(body) for body in bodies))
                seconds = time.perf_counter() - start
                if run:
                    cpu.add("many", used)
                assert all(len(r) == 1 for r in rewards)
                return seconds

            async def one_request(base: int = base + n) -> float:
                body = {"query": [prompt + completion(base + i) for i in range(n)], "prompts": [prompt] * n}
                used, start = cpu.start(), time.perf_counter()
                rewards = await client.post(body)
                seconds = time.perf_counter() - start
                if run:
                    cpu.add("one", used)
                assert len(rewards) == n
                return seconds

            # Alternated, so that neither always runs on a machine the other has just warmed or loaded.
            if run % 2:
                one_s = await one_request()
                many_s = await many_requests()
            else:
                many_s = await many_requests()
                one_s = await one_request()
            if run:
                many.append(many_s)
                one.append(one_s)
    finally:
        await client.close()
    return many, one


def run_server_mode(batch_window_s: float, args: argparse.Namespace, port: int
                    ) -> tuple[list[float], list[float], Cpu]:
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=serve, args=(port, batch_window_s, args), daemon=True)
    process.start()
    try:
        asyncio.run(_wait_ready(port, process))
        cpu = Cpu(process.pid)
        many, one = asyncio.run(measure(port, args, cpu))
        return many, one, cpu
    finally:
        process.terminate()
        process.join(30)


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) the process ``pid`` has used so far; ``None`` off Linux."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=256, help="samples: one-sample requests, or one request")
    parser.add_argument("--runs", type=int, default=5, help="runs per row (the median is printed)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per verifier call")
    parser.add_argument("--max-batch", type=int, default=50, help="claims per call the stub endpoint accepts")
    parser.add_argument("--concurrency", type=int, default=16, help="verifier calls in flight")
    parser.add_argument("--batch-window-s", type=float, default=0.005, help="the server's micro-batching window")
    parser.add_argument("--client", choices=("raw", "aiohttp", "aiohttp-fresh"), default="raw",
                        help="raw: a minimal HTTP/1.1 client on kept-alive connections (the server measured, not "
                             "the client); aiohttp: OpenRLHF's client library; aiohttp-fresh: a connection per "
                             "request, as OpenRLHF makes")
    args = parser.parse_args()

    calls = math.ceil(args.requests / args.max_batch)
    floor_ms = math.ceil(calls / args.concurrency) * args.latency * 1000
    print(f"{args.requests} samples; stub verifier: {args.latency * 1000:.0f} ms per call of <= {args.max_batch} "
          f"claims, <= {args.concurrency} calls in flight (one request: {calls} calls, a {floor_ms:.0f} ms floor); "
          f"client: {args.client}; "
          f"median of {args.runs} runs")
    header = f"{'server':<30} {'many x 1 (ms)':>14} {'1 x many (ms)':>14} {'many / one':>11} {'best / best':>12}"
    print(header)
    print("-" * len(header))
    rows = [(f"micro-batching {args.batch_window_s * 1000:g} ms", args.batch_window_s), ("micro-batching off", 0.0)]
    ratios = {}
    for label, window in rows:
        many, one, cpu = run_server_mode(window, args, _free_port())
        many_ms, one_ms = statistics.median(many) * 1000, statistics.median(one) * 1000
        ratios[label] = many_ms / one_ms
        print(f"{label:<30} {many_ms:>14.1f} {one_ms:>14.1f} {ratios[label]:>10.2f}x {min(many) / min(one):>11.2f}x")
        print(f"{'':<30} runs: many " + " ".join(f"{s * 1000:.0f}" for s in many) + " / one " +
              " ".join(f"{s * 1000:.0f}" for s in one))
        samples = args.runs * args.requests
        server = " / ".join("n/a" if cpu.server[mode] is None else f"{cpu.server[mode] * 1000 / samples:.3f}"
                            for mode in ("many", "one"))
        client = " / ".join(f"{cpu.client[mode] * 1000 / samples:.3f}" for mode in ("many", "one"))
        print(f"{'':<30} CPU ms per sample, many / one: server {server}, client {client}")
    on, off = (ratios[label] for label, _ in rows)
    print(f"\nmicro-batching: {args.requests} one-sample requests take {on:.2f}x one batched request "
          f"(target <= 1.5x), against {off:.2f}x without it")


if __name__ == "__main__":
    from _record import record

    record("reward_microbatch", main)
