"""The task app's trace recording: every rollout's session committed before its response goes out.

Sessions go through one :class:`~proofgym.traces.TraceWriter`; a single committer task flushes it
for everyone waiting (group commit), so concurrent rollouts share transactions, and each
``record`` call returns only once its own session is durable. A session that could not be written
raises for its own rollout only.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Mapping

from proofgym.traces import DEFAULT_PATH, SessionTrace, TraceStore, TraceStoreError, TraceWriteError, TraceWriter


class TraceRecorder:
    """Owns (or borrows) a trace store for an app: ``open`` / ``close`` from the app's lifespan.

    ``store`` is a :class:`~proofgym.traces.TraceStore` (borrowed: left open) or a path / URL
    (opened here, default ``traces/proofgym.db``). Each request's ``run_id`` becomes a run of the
    store (created on first use; runs created here are finished by ``close``, with the counts of
    their stored sessions as the summary).
    """

    def __init__(self, store: TraceStore | str | os.PathLike[str] | None, *, env_name: str,
                 run_config: Mapping[str, Any]) -> None:
        self._source = store
        self._owned = not isinstance(store, TraceStore)
        self._env_name = env_name
        self._run_config = dict(run_config)
        self.store: TraceStore | None = store if isinstance(store, TraceStore) else None
        self._writer: TraceWriter | None = None
        self._runs: dict[str, asyncio.Future[None]] = {}
        self._started_here: set[str] = set()
        self._waiting: list[tuple[str, asyncio.Future[None]]] = []
        self._failed: dict[str, BaseException] = {}
        self._wake = asyncio.Event()
        self._committer: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def url(self) -> str | None:
        """The store's URL (``None`` until opened)."""
        return None if self.store is None else self.store.url

    async def open(self) -> None:
        """Open the store and start the writer (call once, in the running event loop)."""
        if self.store is None:
            source = DEFAULT_PATH if self._source is None else self._source
            self.store = await asyncio.to_thread(TraceStore, source)
        self._writer = TraceWriter(self.store)
        self._wake = asyncio.Event()  # bound to this event loop
        self._closing = False
        self._committer = asyncio.create_task(self._commit_loop(), name="proofgym-trace-committer")

    async def record(self, session: SessionTrace) -> None:
        """Store ``session``; return once it is committed. Raises ``TraceStoreError`` if it was not."""
        if self._writer is None:
            raise TraceStoreError("the trace recorder is not open")
        await self._ensure_run(session.run_id)
        self._writer.submit(session)  # encodes in this thread (fast); blocks only on a full queue
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((session.session_id, done))
        self._wake.set()
        await done

    async def close(self) -> None:
        """Commit what is queued, finish the runs started here, close an owned store."""
        self._closing = True
        if self._committer is not None:
            self._wake.set()
            await self._committer  # settles every batch already taken
            self._committer = None
        if self._writer is not None:
            writer, self._writer = self._writer, None
            try:
                await asyncio.to_thread(writer.close)
            except TraceWriteError as exc:
                self._failed.update(exc.failures)
            self._settle(self._waiting)
            self._waiting = []
        if self.store is not None:
            for run_id in sorted(self._started_here):
                await asyncio.to_thread(self._finish_run, run_id)
            self._started_here.clear()
            if self._owned:
                await asyncio.to_thread(self.store.close)

    def _finish_run(self, run_id: str) -> None:
        assert self.store is not None
        # Counted in the store: other apps (workers) may have added sessions to this run.
        total = self.store.count_sessions(run_id=run_id)
        ok = self.store.count_sessions(run_id=run_id, status="ok")
        self.store.finish_run(run_id, status="ok" if ok == total else "error",
                              summary={"sessions": total, "ok": ok, "failed": total - ok})

    async def _ensure_run(self, run_id: str) -> None:
        started = self._runs.get(run_id)
        if started is None:
            started = self._runs[run_id] = asyncio.ensure_future(self._start_run(run_id))
        try:
            await asyncio.shield(started)
        except TraceStoreError:
            self._runs.pop(run_id, None)  # the next rollout of this run tries again
            raise

    async def _start_run(self, run_id: str) -> None:
        assert self.store is not None
        try:
            await asyncio.to_thread(self.store.start_run, run_id, kind="serve", env_name=self._env_name,
                                    config=self._run_config)
        except TraceStoreError as exc:
            if "already exists" not in str(exc):  # a run id seen by an earlier app: its sessions join it
                raise
        else:
            self._started_here.add(run_id)

    async def _commit_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._waiting = self._waiting, []
            if batch:
                await self._flush(batch)
            if self._closing and not self._waiting:
                return

    async def _flush(self, batch: list[tuple[str, asyncio.Future[None]]]) -> None:
        assert self._writer is not None
        try:
            await asyncio.to_thread(self._writer.flush)
        except TraceWriteError as exc:
            # flush reports every failure since the last flush, including sessions still on their way here.
            self._failed.update(exc.failures)
        except Exception as exc:  # noqa: BLE001 - the store is unusable: every waiting session failed
            self._failed.update((session_id, exc) for session_id, _ in batch)
        self._settle(batch)

    def _settle(self, batch: list[tuple[str, asyncio.Future[None]]]) -> None:
        for session_id, done in batch:
            if done.done():
                continue
            failure = self._failed.pop(session_id, None)
            if failure is None:
                done.set_result(None)
            else:
                done.set_exception(TraceStoreError(f"session {session_id!r} was not stored: {failure}"))

