"""Executors: where a verifier call actually runs. The verifier never knows which one it gets."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import pickle
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, cast, runtime_checkable

from proofgym.core import Claim
from proofgym.verifiers import TransientVerifierError, Verifier


@runtime_checkable
class Executor(Protocol):
    """Runs one verifier call. The runtime awaits :meth:`run` on its own event loop, under its timeout.

    When the runtime's timeout fires it cancels the :meth:`run` coroutine: an executor must then stop
    the call (or make sure it can no longer hold resources) before re-raising ``CancelledError``.
    :meth:`run` returns whatever the verifier returned (the runtime validates it) and raises whatever
    it raised (the runtime classifies it).

    Optional attribute the runtime reads when present: ``max_concurrency: int | None`` -- the most
    calls the executor runs at once; the runtime never has more in flight, so that a call waiting
    for a free worker is queued *before* its timeout starts, not during it.
    """

    async def run(self, verifier: Verifier, claims: list[Claim]) -> list[Any]:
        """Run ``verifier.verify_many(claims)`` and return its answer."""
        ...

    def close(self) -> None:
        """Release workers and threads; idempotent."""
        ...


class InProcessExecutor:
    """Awaits ``verifier.verify_many`` directly on the runtime's event loop.

    Right for I/O-bound verifiers (remote APIs). A verifier that blocks the loop with CPU work cannot
    be timed out here: use :class:`ProcessExecutor` for those.
    """

    max_concurrency: int | None = None

    async def run(self, verifier: Verifier, claims: list[Claim]) -> list[Any]:
        return await verifier.verify_many(claims)

    def close(self) -> None:
        """Nothing to release."""


class WorkerDied(RuntimeError):
    """A worker process exited in the middle of a call (crash, kill, out of memory)."""


class ProcessExecutor:
    """Runs each call in a worker process, for CPU-bound verifiers.

    Up to ``max_workers`` (default: ``os.cpu_count()``) spawned worker processes, each serving one
    call at a time with ``verifier.verify_many(claims)`` on its own event loop (an
    :class:`asyncio.Runner` kept for the worker's life, so loop-bound clients survive between calls).
    The verifier must be picklable; it is pickled once in the parent and sent once to each worker,
    so later changes to the parent's copy are not seen by the workers.

    A call that is cancelled (the runtime's timeout) or whose worker dies gets its worker killed and
    discarded; a fresh one is spawned on demand, so a hung verifier never holds a worker. A worker is
    started with the verifier of the call that needed it loaded (unpickled, and its optional ``warm_up()``
    called: the imports its checks need), in the background: a first call that times out waiting for a
    slow start-up (SymPy on a busy machine) leaves it to finish, and its retry finds the worker ready.

    One instance serves one event loop (the runtime's). Workers are spawned, not forked: the runtime
    owns threads, and forking a threaded process is unsafe. As with any spawn-based pool, a script
    that uses it needs the ``if __name__ == "__main__":`` guard.
    """

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is None:
            max_workers = os.cpu_count() or 1
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()  # guards _workers and _closed: close() may come from another thread
        self._workers: set[_Worker] = set()
        self._closed = False
        self._alive = 0  # started or starting, on the loop thread only
        self._ready: asyncio.Queue[_Worker | BaseException] | None = None
        self._io: ThreadPoolExecutor | None = None
        self._payloads: dict[int, tuple[Verifier, bytes]] = {}

    @property
    def max_concurrency(self) -> int:
        return self.max_workers

    async def run(self, verifier: Verifier, claims: list[Claim]) -> list[Any]:
        if self._closed:
            raise RuntimeError("ProcessExecutor is closed")
        token, payload = self._payload(verifier)
        worker = await self._checkout(token, payload)
        try:
            status, value = await asyncio.get_running_loop().run_in_executor(
                self._io, worker.request, token, None if token in worker.tokens else payload, list(claims)
            )
        except BaseException:
            # Cancelled (the runtime timed the call out) or broken: the worker may still be busy with
            # this call or be dead, so it never serves again.
            self._discard(worker)
            raise
        if status == "ok":
            worker.tokens.add(token)
        self._ready.put_nowait(worker)  # type: ignore[union-attr]
        if status != "ok":
            raise value
        return cast("list[Any]", value)  # a worker answers ("ok", one result per claim)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers, self._workers = self._workers, set()
        for worker in workers:
            worker.stop()
        if self._io is not None:
            self._io.shutdown(wait=True, cancel_futures=True)

    def _payload(self, verifier: Verifier) -> tuple[int, bytes]:
        # Keyed by id() and holding the verifier itself, so the id cannot be reused while cached.
        entry = self._payloads.get(id(verifier))
        if entry is None:
            entry = (verifier, pickle.dumps(verifier, protocol=pickle.HIGHEST_PROTOCOL))
            self._payloads[id(verifier)] = entry
        return id(verifier), entry[1]

    async def _checkout(self, token: int, payload: bytes) -> _Worker:
        if self._ready is None:
            self._ready = asyncio.Queue()
            # Each worker needs a thread for a call in flight and possibly one for its replacement's start-up.
            self._io = ThreadPoolExecutor(2 * self.max_workers, thread_name_prefix="proofgym-worker-io")
        while True:
            if self._ready.empty() and self._alive < self.max_workers:
                self._start_worker(token, payload)
            item = await self._ready.get()
            if isinstance(item, BaseException):
                raise item
            if item.alive:
                return item
            self._discard(item)  # died while idle (e.g. the OOM killer)

    def _start_worker(self, token: int, payload: bytes) -> None:
        worker = _Worker(self._ctx)
        with self._lock:
            self._workers.add(worker)
        self._alive += 1
        # Start-up (with the verifier loaded) runs in the background: a call that stops waiting for it (timeout)
        # leaves it to finish and join the pool, so slow start-ups never turn into an endless kill-and-respawn loop.
        started = asyncio.get_running_loop().run_in_executor(self._io, worker.start, token, payload)
        started.add_done_callback(functools.partial(self._on_started, worker))

    def _on_started(self, worker: _Worker, started: asyncio.Future[None]) -> None:
        error = None if started.cancelled() else started.exception()
        if started.cancelled() or error is not None or self._closed:
            self._discard(worker)
            if error is not None:
                self._ready.put_nowait(error)  # type: ignore[union-attr]
            return
        self._ready.put_nowait(worker)  # type: ignore[union-attr]

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            known = worker in self._workers
            self._workers.discard(worker)
        if known:
            self._alive -= 1
        worker.kill()


class _Worker:
    """One worker process and the parent's end of its pipe. Blocking methods run in I/O threads."""

    def __init__(self, ctx: Any) -> None:
        self._conn, self._child_conn = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(self._child_conn,), daemon=True, name="proofgym-verifier")
        self.tokens: set[int] = set()  # verifiers this worker already holds

    @property
    def alive(self) -> bool:
        return cast(bool, self._process.is_alive())  # ctx is untyped: a multiprocessing context

    def start(self, token: int, payload: bytes) -> None:
        """Start the process and load the verifier ``payload`` in it as ``token``; a verifier that cannot be
        loaded is not an error here (the call that sends it again gets the error as its answer)."""
        self._process.start()
        self._child_conn.close()
        if self._receive() != "ready":
            raise WorkerDied("verifier worker process sent an unexpected greeting")
        status, _ = self.request(token, payload, [])
        if status == "ok":
            self.tokens.add(token)

    def request(self, token: int, payload: bytes | None, claims: list[Claim]) -> tuple[str, Any]:
        try:
            self._conn.send((token, payload, claims))
        except (EOFError, OSError):
            raise self._died() from None
        return cast("tuple[str, Any]", self._receive())  # the worker answers (status, value)

    def _receive(self) -> Any:
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            raise self._died() from None

    def _died(self) -> WorkerDied:
        self._process.join(timeout=1.0)
        return WorkerDied(f"verifier worker process {self._process.pid} died (exit code {self._process.exitcode})")

    def kill(self) -> None:
        if self._process.pid is not None:
            self._process.kill()
            self._process.join()
        self._conn.close()

    def stop(self) -> None:
        """Ask the worker to exit, killing it if it does not within a second (it may be busy)."""
        if self._process.pid is not None and self._process.is_alive():
            try:
                self._conn.send(None)
            except OSError:
                pass
            self._process.join(timeout=1.0)
        self.kill()


def _serve(conn: Any) -> None:
    """A worker process's main loop: receive ``(token, pickled verifier or None, claims)``, reply."""
    # Ctrl-C reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    verifiers: dict[int, Any] = {}
    conn.send("ready")
    with asyncio.Runner() as runner:
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return
            if message is None:
                return
            token, payload, claims = message
            try:
                if payload is not None:
                    verifiers[token] = pickle.loads(payload)
                    warm_up = getattr(verifiers[token], "warm_up", None)
                    if callable(warm_up):
                        warm_up()
                if not claims:  # a load (the worker's start-up): nothing to verify
                    reply: tuple[str, Any] = ("ok", [])
                else:
                    reply = ("ok", runner.run(verifiers[token].verify_many(claims)))
            except BaseException as exc:  # everything the verifier does goes back to the parent as an answer
                reply = ("error", _portable(exc))
            try:
                conn.send(reply)
            except Exception as exc:  # an answer that cannot be pickled
                error = RuntimeError(f"verifier answer could not be sent back: {type(exc).__name__}: {exc}")
                conn.send(("error", error))


def _portable(exc: BaseException) -> Exception:
    """``exc`` if it survives a pickle round trip, else a stand-in of the same retry class."""
    if isinstance(exc, Exception):
        try:
            pickle.loads(pickle.dumps(exc))
            return exc
        except Exception:
            pass
    text = f"{type(exc).__name__}: {exc}"
    for kind in (TransientVerifierError, TimeoutError, ConnectionError):
        if isinstance(exc, kind):
            return kind(text)
    return RuntimeError(text)
