"""``TraceWriter``: record sessions from any thread without waiting on the database.

``submit`` validates and snapshots the session in the caller's thread (later mutation changes nothing) and queues
it; one worker thread writes up to ``max_batch`` sessions per transaction, waiting at most ``max_delay_s`` for a
batch to fill (``0``: write at once; sessions submitted while a write runs share the next transaction, a group
commit). A batch that fails is retried one session at a time, so a bad session (a duplicate id, an unknown run)
loses only itself. Failures are kept and raised together, naming every failed session, by the next ``flush()`` or
``close()``; invalid sessions are reported the same way instead of raising in the rollout loop. Each ``submit``
also returns a future that settles when that session is committed (or has failed), for callers that wait for
their own session only (``asyncio.wrap_future`` makes it awaitable).
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
import weakref
from collections import deque
from concurrent.futures import Future
from typing import TYPE_CHECKING

from proofgym.traces._codec import EncodedSession, encode_session
from proofgym.traces._errors import TraceStoreError, TraceValidationError, TraceWriteError
from proofgym.traces._records import SessionTrace

if TYPE_CHECKING:
    from proofgym.traces._store import TraceStore

_open_writers: weakref.WeakSet[TraceWriter] = weakref.WeakSet()


class TraceWriter:
    """A thread-safe, batching writer in front of a ``TraceStore`` (use as a context manager, or ``close()``).

    ``max_pending`` bounds the queue: ``submit`` blocks while that many sessions wait to be written. With
    ``keep_failures=False`` failures are reported only through the futures ``submit`` returns (for a long-running
    caller that waits on each one, so nothing accumulates). Writers still open at interpreter exit are closed then
    (failures are printed to stderr, as nothing can catch them).
    """

    def __init__(self, store: TraceStore, *, max_batch: int = 64, max_delay_s: float = 0.05,
                 max_pending: int = 10_000, keep_failures: bool = True) -> None:
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f"max_batch must be a positive integer, got {max_batch!r}")
        if isinstance(max_delay_s, bool) or not isinstance(max_delay_s, (int, float)) or not 0 <= max_delay_s < 3600:
            raise ValueError(f"max_delay_s must be a number of seconds in [0, 3600), got {max_delay_s!r}")
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < max_batch:
            raise ValueError(f"max_pending must be an integer >= max_batch ({max_batch}), got {max_pending!r}")
        self.store = store
        self.max_batch, self.max_delay_s, self.max_pending = max_batch, float(max_delay_s), max_pending
        self.keep_failures = bool(keep_failures)
        self.sessions_written = 0
        self.batches_written = 0
        self._cond = threading.Condition()
        self._pending: deque[tuple[EncodedSession, Future[None]]] = deque()
        self._in_flight: list[tuple[EncodedSession, Future[None]]] = []  # the batch being written
        self._failures: list[tuple[str, BaseException]] = []
        self._submitted = 0
        self._settled = 0  # written or failed
        self._flushing = 0
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="proofgym-trace-writer", daemon=True)
        self._thread.start()
        _open_writers.add(self)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, session: SessionTrace) -> Future[None]:
        """Queue a session for writing (blocks only while ``max_pending`` sessions are queued).

        Returns a future whose result is ``None`` once the session is committed; when it could not be stored
        (invalid, a duplicate id, an unknown run, a database failure) its exception is the reason. Failures are
        also raised by the next ``flush()`` or ``close()``, whether or not the future was looked at.
        """
        if not isinstance(session, SessionTrace):
            raise TypeError(f"TraceWriter.submit takes a SessionTrace, got {type(session).__name__}")
        try:
            encoded: EncodedSession | None = encode_session(session)
            failure = None
        except TraceValidationError as exc:
            encoded, failure = None, exc
        done: Future[None] = Future()
        done.set_running_or_notify_cancel()  # a queued session is written whatever its waiter does: no cancel
        with self._cond:
            if self._closing:
                raise TraceStoreError("TraceWriter is closed; submit sessions before close()")
            if failure is not None:
                if self.keep_failures:
                    self._failures.append((str(session.session_id), failure))
                done.set_exception(failure)
                return done
            while len(self._pending) >= self.max_pending and not self._closing:
                self._cond.wait()
            if self._closing:
                raise TraceStoreError("TraceWriter was closed while this submit waited for room")
            self._pending.append((encoded, done))  # type: ignore[arg-type]  # encoded: no failure, so not None
            self._submitted += 1
            self._cond.notify_all()
        return done

    def flush(self, timeout: float | None = None) -> None:
        """Block until every session submitted so far is committed (or failed); raise ``TraceWriteError`` if any
        failed since the last flush. ``TimeoutError`` if that takes longer than ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._submitted
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._settled < target:
                    if not self._thread.is_alive():
                        raise TraceStoreError("the TraceWriter's worker thread has stopped")
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(f"TraceWriter.flush: {target - self._settled} session(s) still "
                                           f"unwritten after {timeout} s")
                    self._cond.wait(0.5 if left is None else min(left, 0.5))
            finally:
                self._flushing -= 1
            self._raise_failures()

    def close(self) -> None:
        """Write everything queued, stop the worker, and raise ``TraceWriteError`` for any failed session."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        _open_writers.discard(self)
        with self._cond:
            self._raise_failures()

    def _raise_failures(self) -> None:
        failures, self._failures = self._failures, []
        if failures:
            raise TraceWriteError(failures)

    def _run(self) -> None:
        try:
            self._write_until_closed()
        except BaseException as exc:  # a bug here must not leave a waiter on a future forever
            with self._cond:
                stranded, self._pending = self._in_flight + list(self._pending), deque()
                self._in_flight = []
                self._cond.notify_all()
            for _, done in stranded:
                if not done.done():
                    done.set_exception(TraceStoreError(f"the TraceWriter's worker thread stopped: {exc!r}"))
            raise

    def _write_until_closed(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                if not self._pending:
                    return
                deadline = time.monotonic() + self.max_delay_s
                while len(self._pending) < self.max_batch and not (self._closing or self._flushing):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch = [self._pending.popleft() for _ in range(min(self.max_batch, len(self._pending)))]
                self._in_flight = batch
                self._cond.notify_all()  # room for submitters waiting on max_pending
            errors = self._write([encoded for encoded, _ in batch])
            failures = [(encoded.session_id, error) for (encoded, _), error in zip(batch, errors) if error is not None]
            with self._cond:
                if self.keep_failures:
                    self._failures.extend(failures)
                self._settled += len(batch)
                self.sessions_written += len(batch) - len(failures)
                self._cond.notify_all()
            for (encoded, done), error in zip(batch, errors):
                if error is None:
                    done.set_result(None)
                else:
                    done.set_exception(error if isinstance(error, TraceStoreError) else TraceStoreError(
                        f"session {encoded.session_id!r} was not stored: {error}"))
            self._in_flight = []

    def _write(self, batch: list[EncodedSession]) -> list[BaseException | None]:
        """Write ``batch`` in one transaction, else one session at a time: each session's failure or ``None``."""
        try:
            self.store._write_encoded(batch)
            self.batches_written += 1
            return [None] * len(batch)
        except Exception as exc:  # noqa: BLE001 - every failure is kept and raised by flush/close
            if len(batch) == 1:
                return [exc]
        errors: list[BaseException | None] = []
        for encoded in batch:
            try:
                self.store._write_encoded([encoded])
                self.batches_written += 1
                errors.append(None)
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)
        return errors


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_open_writers):
        try:
            writer.close()
        except Exception as exc:  # noqa: BLE001 - at exit there is no caller left to raise to
            print(f"proofgym: TraceWriter at exit: {exc}", file=sys.stderr)
