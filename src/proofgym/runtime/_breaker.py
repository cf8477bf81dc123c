"""A circuit breaker: stop calling a verifier backend that keeps failing, probe it now and then."""

from __future__ import annotations

import threading
import time
from enum import StrEnum
from typing import Callable


class BreakerState(StrEnum):
    """Where a :class:`CircuitBreaker` stands."""

    CLOSED = "closed"  # calls go through
    OPEN = "open"  # calls are refused
    HALF_OPEN = "half_open"  # one trial call may go through


class CircuitBreaker:
    """Counts consecutive failed calls; at ``failure_threshold`` it opens and refuses calls.

    A *failed call* is an infrastructure failure (the call ended without any usable verdict after its
    retries), never a refuted claim. ``reset_after_s`` after opening it turns half-open and admits one
    trial call: a success closes it, a failure re-opens it. Any success while closed resets the count.

    The caller drives it: :meth:`allow` before a call, then exactly one of :meth:`record_success`,
    :meth:`record_failure` or (for a trial call that ended without telling anything, e.g. cancelled)
    :meth:`release_trial`. Thread-safe; ``clock`` returns monotonic seconds (injectable for tests).
    """

    def __init__(
        self,
        failure_threshold: int = 5,
        reset_after_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError(f"failure_threshold must be >= 1, got {failure_threshold}")
        if reset_after_s < 0:
            raise ValueError(f"reset_after_s must be >= 0, got {reset_after_s}")
        self.failure_threshold = failure_threshold
        self.reset_after_s = reset_after_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._trial_in_flight = False

    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker reads half-open once ``reset_after_s`` has passed)."""
        with self._lock:
            return self._current()

    @property
    def consecutive_failures(self) -> int:
        """Failed calls since the last success (or since the breaker last opened)."""
        with self._lock:
            return self._failures

    def allow(self) -> bool:
        """Whether a call may go through now; in half-open state only the first caller gets ``True``."""
        with self._lock:
            state = self._current()
            if state is BreakerState.CLOSED:
                return True
            if state is BreakerState.OPEN or self._trial_in_flight:
                return False
            self._state = BreakerState.HALF_OPEN
            self._trial_in_flight = True
            return True

    def record_success(self) -> None:
        """A call produced usable verdicts: close the breaker (unless it is open, see below)."""
        with self._lock:
            # A call admitted before the breaker opened may still succeed; only the timer and a
            # trial call decide when an open breaker lets traffic through again.
            if self._current() is BreakerState.OPEN:
                return
            self._state = BreakerState.CLOSED
            self._failures = 0
            self._trial_in_flight = False

    def record_failure(self) -> None:
        """A call ended without a usable verdict: count it, open at the threshold, re-open on a failed trial."""
        with self._lock:
            state = self._current()
            if state is BreakerState.HALF_OPEN:
                self._open()
            elif state is BreakerState.CLOSED:
                self._failures += 1
                if self._failures >= self.failure_threshold:
                    self._open()

    def release_trial(self) -> None:
        """The half-open trial call ended without a verdict on the backend's health: admit another."""
        with self._lock:
            self._trial_in_flight = False

    def _current(self) -> BreakerState:
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.reset_after_s:
            return BreakerState.HALF_OPEN
        return self._state

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        self._opened_at = self._clock()
        self._trial_in_flight = False
        self._failures = 0

    def __repr__(self) -> str:
        failures = f"{self.consecutive_failures}/{self.failure_threshold}"
        return f"CircuitBreaker(state={self.state.value}, failures={failures})"
