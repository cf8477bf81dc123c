"""Several app processes on one port, each listening on its own socket (``SO_REUSEPORT``, Linux).

Processes that share one listening socket take connections in bursts: whichever wakes first accepts
many at once, and keep-alive clients (a trainer's connection pool) then stay with it, so one worker
may do most of the work while the others idle. Here the supervisor binds one socket per worker in
the port's reuse-port group; the kernel spreads new connections evenly over them. The supervisor
keeps the sockets: a worker that dies is replaced on the same socket, and connections queued on it
meanwhile wait for the replacement instead of being refused.

Workers run in their own process group, so a Ctrl+C in a terminal reaches only the supervisor, which
sends every worker one SIGTERM (each drains its rollouts, see ``create_app(drain_on_signal=True)``);
a second Ctrl+C kills them. A worker also gets SIGTERM when the supervisor dies.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from typing import Any, Mapping

logger = logging.getLogger("uvicorn.error")

STARTUP_FAILURE = 3  # a worker's exit status when its app never started (as uvicorn's)
_BACKLOG = 2048
_PR_SET_PDEATHSIG = 1


def reuse_port_available() -> bool:
    """Whether the kernel balances connections over sockets bound with ``SO_REUSEPORT`` (Linux)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def bind_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening sockets on ``host:port`` in one reuse-port group (port 0: a free port, the same
    for all). Raises ``OSError`` when the address cannot be bound."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            port = sock.getsockname()[1]
            sock.listen(_BACKLOG)
            sock.set_inheritable(True)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Supervisor:
    """Runs one worker process per socket until SIGINT / SIGTERM, replacing workers that die.

    ``app_settings`` are :func:`~proofgym.taskapp.create_app`'s keyword arguments (picklable);
    ``options`` are ``uvicorn.Config``'s. ``run`` returns the exit status: 0 after a shutdown,
    1 when a worker failed to start (the app or its settings are broken: restarting would fail again).
    """

    def __init__(self, sockets: list[socket.socket], app_settings: Mapping[str, Any], options: Mapping[str, Any],
                 grace_s: float) -> None:
        self.sockets = sockets
        self.app_settings = dict(app_settings)
        self.options = dict(options)
        self.grace_s = grace_s
        self.processes: list[multiprocessing.process.BaseProcess | None] = [None] * len(sockets)
        self._context = multiprocessing.get_context("spawn")
        self._signals: list[int] = []

    def run(self) -> int:
        host, port = self.options.get("host", "127.0.0.1"), self.sockets[0].getsockname()[1]
        logger.info("Uvicorn running on http://%s:%d with %d workers, one socket each (Press CTRL+C to quit)",
                    f"[{host}]" if ":" in host else host, port, len(self.sockets))
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for index in range(len(self.sockets)):
                self._start(index)
            status = self._watch()
            self._stop()
            return status
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, sig: int, frame: Any) -> None:
        self._signals.append(sig)

    def _start(self, index: int) -> None:
        process = self._context.Process(target=_worker_main, name=f"proofgym-serve-worker-{index}",
                                        args=(self.sockets[index], self.app_settings, self.options, os.getpid()))
        process.start()
        self.processes[index] = process

    def _watch(self) -> int:
        while not self._signals:
            live = [p.sentinel for p in self.processes if p is not None]
            multiprocessing.connection.wait(live, timeout=0.5)
            for index, process in enumerate(self.processes):
                if process is None or process.is_alive() or self._signals:
                    continue
                process.join()
                if process.exitcode == STARTUP_FAILURE:
                    logger.error("worker %d (pid %d) could not start its app; stopping", index, process.pid)
                    return 1
                logger.warning("worker %d (pid %d) exited with status %s; starting a replacement", index,
                               process.pid, process.exitcode)
                self._start(index)
        logger.info("received %s: draining the %d workers", signal.Signals(self._signals[0]).name,
                    len(self.processes))
        return 0

    def _stop(self) -> None:
        """SIGTERM to every worker (each drains, up to ``grace_s``), then SIGKILL to any still running after
        a margin, or at once on a second signal."""
        live = [p for p in self.processes if p is not None and p.is_alive()]
        for process in live:
            _signal(process, signal.SIGTERM)
        handled = len(self._signals)
        deadline = time.monotonic() + self.grace_s + 15.0
        while live and time.monotonic() < deadline and len(self._signals) == handled:
            multiprocessing.connection.wait([p.sentinel for p in live], timeout=0.5)
            live = [p for p in live if p.is_alive()]
        for process in live:
            logger.warning("worker pid %d did not stop in time; killing it", process.pid)
            _signal(process, signal.SIGKILL)
        for worker in self.processes:
            if worker is not None:
                worker.join()


def _signal(process: multiprocessing.process.BaseProcess, sig: int) -> None:
    try:
        os.kill(process.pid, sig)  # type: ignore[arg-type]
    except ProcessLookupError:
        pass


def _worker_main(sock: socket.socket, app_settings: dict[str, Any], options: dict[str, Any], parent: int) -> None:
    import uvicorn

    from proofgym.taskapp._app import create_app

    os.setpgid(0, 0)  # terminal signals go to the supervisor, which forwards one SIGTERM
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # without it, an orphaned worker runs until signalled
        pass
    if os.getppid() != parent:  # the supervisor died before prctl took effect
        sys.exit(0)
    try:
        app = create_app(**app_settings)
    except Exception:  # noqa: BLE001 - the supervisor stops: every replacement would fail the same way
        logger.exception("worker pid %d could not build its app", os.getpid())
        sys.exit(STARTUP_FAILURE)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)
