"""The task app's trace recording: every rollout's session committed before its response goes out.

Sessions go through one :class:`~proofgym.traces.TraceWriter` that writes as soon as a session
arrives; sessions that arrive while a write runs share the next transaction (group commit), and
each ``record`` call returns once its own session is committed (its future, settled by the
writer's thread). A session that could not be written raises for its own rollout only.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Mapping

from proofgym.traces import (
    DEFAULT_PATH,
    SessionTrace,
    TraceStore,
    TraceStoreError,
    TraceWriter,
)


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

    @property
    def url(self) -> str | None:
        """The store's URL (``None`` until opened)."""
        return None if self.store is None else self.store.url

    async def open(self) -> None:
        """Open the store and start the writer (call once, in the running event loop)."""
        if self.store is None:
            assert not isinstance(self._source, TraceStore)  # a borrowed store is self.store from the start
            source = DEFAULT_PATH if self._source is None else self._source
            self.store = await asyncio.to_thread(TraceStore, source)
        # No batching delay: a rollout's response waits for its commit. Failures reach each rollout
        # through its own future, so the writer keeps none for a flush nobody calls.
        self._writer = TraceWriter(self.store, max_delay_s=0, keep_failures=False)

    async def record(self, session: SessionTrace) -> None:
        """Store ``session``; return once it is committed. Raises ``TraceStoreError`` if it was not."""
        if self._writer is None:
            raise TraceStoreError("the trace recorder is not open")
        await self._ensure_run(session.run_id)
        # Encodes in this thread (fast); blocks only on a full queue.
        await asyncio.wrap_future(self._writer.submit(session))

    async def close(self) -> None:
        """Commit what is queued, finish the runs started here, close an owned store."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            await asyncio.to_thread(writer.close)  # writes what is queued, settling every future
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
