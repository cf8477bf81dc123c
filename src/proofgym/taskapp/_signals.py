"""Drain before stopping: SIGINT / SIGTERM first drain the app's rollouts, then reach the server's own handler."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any, Callable

from proofgym.taskapp._controller import RolloutController

logger = logging.getLogger("proofgym.taskapp")


class SignalDrain:
    """SIGINT / SIGTERM handlers on the running loop that drain the app's rollouts before handing the
    signal on to the handler installed before them (see ``create_app(drain_on_signal=True)``)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, controller: RolloutController, grace_s: float) -> None:
        self._controller = controller
        self._grace_s = grace_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._originals: dict[int, Callable[[int, Any], Any]] = {}
        self._task: asyncio.Task[None] | None = None
        self._held: tuple[int, Callable[[int, Any], Any]] | None = None  # the first signal, during its drain

    def install(self) -> None:
        """Take over the signals that have a Python handler now (main thread only; else nothing)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._loop = asyncio.get_running_loop()
        for sig in self.SIGNALS:
            original = signal.getsignal(sig)
            if not callable(original):  # SIG_DFL, SIG_IGN, or a handler not set from Python (None)
                continue
            try:
                self._loop.add_signal_handler(sig, self._received, sig, original)
            except (NotImplementedError, RuntimeError, ValueError):  # a loop without signal support
                continue
            self._originals[sig] = original

    def uninstall(self) -> None:
        """Put the handlers found by :meth:`install` back (the server restores its own ones later)."""
        for sig, original in self._originals.items():
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_signal_handler(sig)  # this leaves SIG_DFL (SIGINT: default_int_handler)
            signal.signal(sig, original)
        self._originals.clear()

    async def wait(self) -> None:
        """Wait for a drain a signal started (it ends with the app's own drain at shutdown)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def _received(self, sig: int, original: Callable[[int, Any], Any]) -> None:
        if self._task is None:
            logger.info("received %s: draining running rollouts (up to %gs) before shutting down",
                        signal.Signals(sig).name, self._grace_s)
            self._held = (sig, original)
            self._task = asyncio.get_running_loop().create_task(self._drain_then_hand_on())
        else:
            # A later signal goes on at once, after the first one if that is still held back: the
            # server sees every signal, in order (uvicorn: a second Ctrl+C forces the exit).
            self._hand_on_held()
            original(sig, None)

    async def _drain_then_hand_on(self) -> None:
        try:
            cancelled = await self._controller.drain(self._grace_s)
            if cancelled:
                logger.warning("cancelled %d running rollout(s) at shutdown", cancelled)
        finally:
            self._hand_on_held()

    def _hand_on_held(self) -> None:
        if self._held is not None:
            sig, original = self._held
            self._held = None
            original(sig, None)
