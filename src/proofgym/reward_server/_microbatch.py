"""Cross-request micro-batching: concurrent requests' items scored by one call.

OpenRLHF sends one sample per request. Verified one request at a time, every sample is a batch of its
own: a remote verifier that takes up to 50 claims per round trip makes one round trip per sample, and
nothing is de-duplicated across a GRPO group. :class:`MicroBatcher` gathers the requests that arrive
within ``window_s`` seconds of the oldest waiting one (or until ``max_items`` items wait) and hands all of
their items to one ``score`` call, in a worker thread; each request gets back its own slice, in order.

- A request is never split: one larger than ``max_items`` is scored alone.
- At most ``max_batches`` calls run at once; requests arriving meanwhile wait and join the next batch, so
  batches grow with the load instead of queueing one by one.
- When a merged call raises, each of its requests is scored alone: only the request whose items raise gets
  the exception, the others their results (a request scored alone raises as it would without the batcher).
- A request cancelled while it waits (its client gone, the server shutting down) is dropped from the batch.

The batcher holds no event loop of its own: it works on the running one, so an app can be served by one
loop after another (as in-process test clients do).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class _Job(Generic[Item]):
    items: Sequence[Item]
    future: asyncio.Future[Any]
    arrived: float


class MicroBatcher(Generic[Item, Result]):
    """``await batcher.submit(items) -> results``: ``score(all waiting items) -> one result per item``, shared
    by the requests that arrive within ``window_s`` seconds, up to ``max_items`` items per call and
    ``max_batches`` calls at once."""

    def __init__(self, score: Callable[[list[Item]], Sequence[Result]], *, window_s: float, max_items: int,
                 max_batches: int) -> None:
        if not (isinstance(window_s, (int, float)) and math.isfinite(window_s) and window_s >= 0):
            raise ValueError(f"window_s must be a finite number of seconds >= 0, got {window_s!r}")
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1:
            raise ValueError(f"max_items must be an integer >= 1, got {max_items!r}")
        if isinstance(max_batches, bool) or not isinstance(max_batches, int) or max_batches < 1:
            raise ValueError(f"max_batches must be an integer >= 1, got {max_batches!r}")
        self.score = score
        self.window_s = float(window_s)
        self.max_items = max_items
        self.max_batches = max_batches
        self._pending: deque[_Job[Item]] = deque()
        self._pending_items = 0
        self._running = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Calls made and requests they carried (for tests and metrics; a fallback's solo calls count too).
        self.calls = 0
        self.requests = 0

    @property
    def waiting_items(self) -> int:
        """Items of the requests waiting for a batch to start."""
        return self._pending_items

    async def submit(self, items: Sequence[Item]) -> list[Result]:
        """The results of ``items``, scored together with whatever other requests are waiting."""
        loop = asyncio.get_running_loop()
        job = _Job(items, loop.create_future(), loop.time())
        self._pending.append(job)
        self._pending_items += len(items)
        self._kick(loop)
        try:
            results: list[Result] = await job.future
            return results
        except asyncio.CancelledError:
            if job in self._pending:  # not started: nothing else waits on it
                self._pending.remove(job)
                self._pending_items -= len(job.items)
            raise

    def _kick(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start every batch that is due (full, or its oldest request waited ``window_s``) while a slot is free;
        otherwise make sure a timer fires when the oldest request's window closes."""
        while self._pending and self._running < self.max_batches:
            due = self._pending[0].arrived + self.window_s
            if self._pending_items < self.max_items and loop.time() < due:
                # A timer of a loop that has since closed (a test client's) never fires: armed anew on this one.
                if self._timer is None or self._timer_loop is not loop:
                    self._timer, self._timer_loop = loop.call_at(due, self._window_closed, loop), loop
                return
            self._start(self._take(), loop)

    def _window_closed(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self._kick(loop)

    def _take(self) -> list[_Job[Item]]:
        jobs = [self._pending.popleft()]
        size = len(jobs[0].items)
        while self._pending and size + len(self._pending[0].items) <= self.max_items:
            size += len(self._pending[0].items)
            jobs.append(self._pending.popleft())
        self._pending_items -= size
        return jobs

    def _start(self, jobs: list[_Job[Item]], loop: asyncio.AbstractEventLoop) -> None:
        self._running += 1
        task = loop.create_task(self._run(jobs, loop))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, jobs: list[_Job[Item]], loop: asyncio.AbstractEventLoop) -> None:
        try:
            if len(jobs) == 1:
                await self._run_alone(jobs[0])
                return
            flat = [item for job in jobs for item in job.items]
            self.calls += 1
            self.requests += len(jobs)
            try:
                results = await self._score(flat)
            except Exception:  # noqa: BLE001 - one request's bad items must not cost the others their answers
                await asyncio.gather(*(self._run_alone(job) for job in jobs))
                return
            start = 0
            for job in jobs:
                _resolve(job, result=results[start:start + len(job.items)])
                start += len(job.items)
        finally:
            self._running -= 1
            if not loop.is_closed():
                self._kick(loop)

    async def _run_alone(self, job: _Job[Item]) -> None:
        self.calls += 1
        self.requests += 1
        try:
            results = await self._score(list(job.items))
        except Exception as exc:  # noqa: BLE001 - handed to the request it belongs to
            _resolve(job, error=exc)
            return
        _resolve(job, result=results)

    async def _score(self, items: list[Item]) -> list[Result]:
        results = list(await asyncio.to_thread(self.score, items))
        if len(results) != len(items):
            raise RuntimeError(f"the scorer returned {len(results)} results for {len(items)} items")
        return results


def _resolve(job: _Job[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    if job.future.done():  # the request was cancelled while its batch ran: the result is not wanted
        return
    if error is not None:
        job.future.set_exception(error)
    else:
        job.future.set_result(result)
