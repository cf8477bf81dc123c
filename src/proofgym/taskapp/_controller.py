"""Admission and shutdown of rollouts: a bound on how many run at once, and a drain that ends them all."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, TypeVar

T = TypeVar("T")


class Draining(Exception):
    """The app is shutting down and takes no new rollouts (the client sees 503)."""


class RolloutCancelled(Exception):
    """The rollout was cancelled by the app's drain (its caller was not): the app is shutting down."""


class RolloutController:
    """Runs rollouts, at most ``max_concurrency`` at a time, each in its own task.

    A rollout waiting for a slot does not start its clock. ``drain`` stops admission (``Draining``
    for every new or still-queued rollout), lets running ones finish for ``grace_s`` seconds and
    cancels the rest (their callers get ``RolloutCancelled``), so shutdown never waits on a stuck
    policy.
    """

    def __init__(self, max_concurrency: int) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self._slots = asyncio.Semaphore(max_concurrency)
        self._running: set[asyncio.Task[Any]] = set()
        self.draining = False
        self.waiting = 0
        self.started = 0
        self.finished = 0

    @property
    def running(self) -> int:
        """Rollouts running now."""
        return len(self._running)

    async def run(self, rollout: Awaitable[T]) -> T:
        """Run ``rollout`` when a slot is free; raises ``Draining`` if the app shuts down first."""
        if self.draining:
            _close(rollout)
            raise Draining()
        self.waiting += 1
        try:
            await self._slots.acquire()
        except BaseException:
            _close(rollout)
            raise
        finally:
            self.waiting -= 1
        try:
            if self.draining:
                _close(rollout)
                raise Draining()
            task = asyncio.ensure_future(rollout)
            self._running.add(task)
            self.started += 1
            try:
                # A cancelled caller (the server's own shutdown timeout) cancels its rollout with it.
                return await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if task.cancelled() and (current is None or not current.cancelling()):
                    raise RolloutCancelled() from None
                raise
            finally:
                self._running.discard(task)
                self.finished += 1
        finally:
            self._slots.release()

    async def drain(self, grace_s: float) -> int:
        """Stop admitting rollouts, wait up to ``grace_s`` for running ones, cancel the rest.

        Returns how many were cancelled. Safe to call more than once.
        """
        self.draining = True
        pending = set(self._running)
        if pending and grace_s > 0:
            _, pending = await asyncio.wait(pending, timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            # Cancelled rollouts record themselves as such; give them a moment to do it.
            await asyncio.wait(pending, timeout=5.0)
        return len(pending)


def _close(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that will never run (no 'never awaited' warning)."""
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
