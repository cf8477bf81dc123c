"""``--workers N`` on Linux: one socket per worker (SO_REUSEPORT), so connections spread over the workers; a worker
that dies is replaced on its socket; a worker whose app cannot start stops the supervisor."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import socket
import time

import httpx
import pytest

from proofgym.taskapp._workers import Supervisor, bind_sockets, reuse_port_available

from ._support import TaskAppProcess

pytestmark = pytest.mark.skipif(not reuse_port_available(), reason="SO_REUSEPORT balancing is Linux-only")


def worker_pids(app: TaskAppProcess, connections: int) -> collections.Counter:
    """The worker that answers ``/info`` on each of ``connections`` connections opened at once (a trainer's
    connection pool starting up)."""

    async def burst() -> list[int]:
        clients = [app.async_client() for _ in range(connections)]
        try:
            return [r.json()["worker_pid"] for r in await asyncio.gather(*(c.get("/info") for c in clients))]
        finally:
            for client in clients:
                await client.aclose()

    return collections.Counter(asyncio.run(burst()))


@pytest.mark.slow  # a burst against a multi-worker app (5 s)
def test_a_burst_of_connections_spreads_over_every_worker(tmp_path):
    # With one shared socket, the worker that wakes first took 31 or 32 of 32 connections here.
    with TaskAppProcess("grant_eligibility", "--workers", "2", traces=tmp_path / "t.db") as app:
        for _ in range(3):
            served = worker_pids(app, 32)
            assert len(served) == 2 and min(served.values()) >= 6, served


def test_a_killed_worker_is_replaced_on_its_socket(tmp_path):
    with TaskAppProcess("grant_eligibility", "--workers", "2", traces=tmp_path / "t.db") as app:
        before = set(worker_pids(app, 16))
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while True:
            try:
                after = set(worker_pids(app, 16))
            except httpx.HTTPError:  # connections queued on the dead worker's socket wait for its replacement
                after = set()
            if len(after) == 2 and victim not in after:
                break
            assert time.monotonic() < deadline, f"no replacement for worker {victim}: {after}"
            time.sleep(0.2)
        assert app.client().get("/health").status_code == 200
        assert app.terminate() == 0
    assert any("starting a replacement" in line for line in app.log)


def test_a_worker_whose_app_cannot_start_stops_the_supervisor():
    sockets = bind_sockets("127.0.0.1", 0, 1)
    try:
        started = time.monotonic()
        status = Supervisor(sockets, {"env_name": "no-such-env"}, {"log_level": "warning"}, grace_s=1).run()
        assert status == 1 and time.monotonic() - started < 60
    finally:
        for sock in sockets:
            sock.close()


def test_the_sockets_share_one_port_and_accept_connections():
    sockets = bind_sockets("127.0.0.1", 0, 3)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(ports) == 1
        with socket.create_connection(("127.0.0.1", ports.pop()), timeout=5):
            pass
    finally:
        for sock in sockets:
            sock.close()
