"""Rate limits of one judge endpoint: requests per minute, tokens per minute and calls in flight, shared by every
judge that calls the same base URL (:func:`limiter_for`).

Each call reserves one request and its estimated tokens (prompt characters / 4 + ``max_tokens``) before it is sent,
and settles with the tokens the response reports using; a 429's ``Retry-After`` pauses the endpoint
(:meth:`RateLimiter.pause`) for every caller. The buckets start full and refill continuously, so a burst of a
minute's worth goes at once and the rest follows at the limit.

A limiter is shared across judges, whose runtimes run their own event loops in their own threads: its state is
guarded by a lock and waiters are woken on their own loops, so any loop may use it.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

# A caller waiting for a slot rechecks at least this often (a safety net: releases wake waiters directly).
_RECHECK_S = 1.0


class EndpointLimits(BaseModel):
    """The limits of one endpoint; ``None`` is no limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_minute: float | None = Field(None, gt=0, allow_inf_nan=False)
    tokens_per_minute: float | None = Field(None, gt=0, allow_inf_nan=False)
    max_concurrency: int | None = Field(32, ge=1, description="calls in flight at most")

    def tightest(self, other: EndpointLimits) -> EndpointLimits:
        """Each limit the tighter of ``self``'s and ``other``'s (``None`` being the loosest)."""
        def low(a: Any, b: Any) -> Any:
            return b if a is None else a if b is None else min(a, b)
        return EndpointLimits(requests_per_minute=low(self.requests_per_minute, other.requests_per_minute),
                              tokens_per_minute=low(self.tokens_per_minute, other.tokens_per_minute),
                              max_concurrency=low(self.max_concurrency, other.max_concurrency))


class _Bucket:
    """A token bucket holding up to ``per_minute``, refilled at ``per_minute / 60`` a second."""

    def __init__(self, per_minute: float, now: float) -> None:
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.level = per_minute
        self.stamp = now

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)

    def wait_s(self, cost: float) -> float:
        """How long until ``cost`` is available (a cost above the capacity waits for a full bucket)."""
        missing = min(cost, self.capacity) - self.level
        return 0.0 if missing <= 0 else missing / self.rate

    def take(self, cost: float) -> None:
        self.level -= min(cost, self.capacity)

    def give_back(self, amount: float) -> None:
        """Correct a reservation: a positive ``amount`` returns unused tokens, a negative one charges more."""
        self.level = min(self.capacity, self.level + amount)


class Reservation:
    """One call's hold on the endpoint; :meth:`settle` with the tokens the call really used."""

    __slots__ = ("estimated", "settled")

    def __init__(self, estimated: float) -> None:
        self.estimated = estimated
        self.settled: float | None = None

    def settle(self, tokens_used: int | float | None) -> None:
        """The tokens the response reported (``None``: unknown, the estimate stands)."""
        if tokens_used is not None and math.isfinite(tokens_used) and tokens_used >= 0:
            self.settled = float(tokens_used)


class RateLimiter:
    """Admits calls to one endpoint within its :class:`EndpointLimits`::

        async with limiter.reserve(estimated_tokens) as reservation:
            response = await post(...)
            reservation.settle(usage_tokens)

    ``clock`` and ``sleep`` are injectable, so tests can run a minute of limits in no time.
    """

    def __init__(self, limits: EndpointLimits | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] | None = None) -> None:
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self._in_flight = 0
        self._paused_until = -math.inf
        self._counts = {"admitted": 0, "waited": 0, "pauses": 0}
        self._limits = EndpointLimits()
        self._requests: _Bucket | None = None
        self._tokens: _Bucket | None = None
        self.configure(limits or EndpointLimits())

    @property
    def limits(self) -> EndpointLimits:
        return self._limits

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def configure(self, limits: EndpointLimits) -> None:
        """Apply ``limits`` from now on (calls in flight keep their slots)."""
        now = self._clock()
        with self._lock:
            self._limits = limits
            self._requests = _rebucket(self._requests, limits.requests_per_minute, now)
            self._tokens = _rebucket(self._tokens, limits.tokens_per_minute, now)
        self._wake_one()

    def pause(self, seconds: float) -> None:
        """Admit nothing for ``seconds`` from now (a 429's ``Retry-After``); a longer pause already set stands."""
        if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
            return
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + seconds)
            self._counts["pauses"] += 1

    def paused_for(self) -> float:
        """Seconds left of the current pause (0 when none)."""
        return max(0.0, self._paused_until - self._clock())

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {**self._counts, "in_flight": self._in_flight}

    def reserve(self, estimated_tokens: float = 0.0) -> _Hold:
        """An async context manager holding one request, ``estimated_tokens`` and a concurrency slot."""
        return _Hold(self, Reservation(max(0.0, float(estimated_tokens))))

    # -- admission -------------------------------------------------------------------------------------------------

    async def _acquire(self, reservation: Reservation) -> None:
        waited = False
        while True:
            waiter: asyncio.Future[None] | None = None
            with self._lock:
                now = self._clock()
                limit = self._limits.max_concurrency
                if limit is not None and self._in_flight >= limit:
                    loop = asyncio.get_running_loop()
                    waiter = loop.create_future()
                    self._waiters.append((loop, waiter))
                    delay = 0.0
                else:
                    delay = self._delay_s(now, reservation.estimated)
                    if delay <= 0:
                        self._take(reservation.estimated)
                        self._counts["admitted"] += 1
                        self._counts["waited"] += waited
                        more = self._waiters and (limit is None or self._in_flight < limit)
                        break
            waited = True
            if waiter is None:
                await self._sleep(delay)
                continue
            try:
                await asyncio.wait({waiter}, timeout=_RECHECK_S)
            except asyncio.CancelledError:
                self._forget(waiter, pass_on=True)
                raise
            self._forget(waiter, pass_on=False)
        if more:
            self._wake_one()  # a slot is still free: the next waiter may take it

    def _delay_s(self, now: float, tokens: float) -> float:
        delay = self._paused_until - now
        for bucket, cost in ((self._requests, 1.0), (self._tokens, tokens)):
            if bucket is not None:
                bucket.refill(now)
                delay = max(delay, bucket.wait_s(cost))
        return delay

    def _take(self, tokens: float) -> None:
        self._in_flight += 1
        if self._requests is not None:
            self._requests.take(1.0)
        if self._tokens is not None:
            self._tokens.take(tokens)

    def _release(self, reservation: Reservation) -> None:
        with self._lock:
            self._in_flight -= 1
            if self._tokens is not None and reservation.settled is not None:
                self._tokens.refill(self._clock())
                self._tokens.give_back(min(reservation.estimated, self._tokens.capacity) - reservation.settled)
        self._wake_one()

    def _forget(self, waiter: asyncio.Future[None], *, pass_on: bool) -> None:
        """Drop ``waiter`` from the queue. A waiter that gives up after it was woken (``pass_on``) hands its
        wake-up to the next one, so a free slot is never left with callers waiting for it."""
        with self._lock:
            for entry in self._waiters:
                if entry[1] is waiter:
                    self._waiters.remove(entry)
                    return
        if pass_on:
            self._wake_one()

    def _wake_one(self) -> None:
        with self._lock:
            while self._waiters:
                loop, waiter = self._waiters.popleft()
                try:
                    loop.call_soon_threadsafe(_resolve, waiter)
                    return
                except RuntimeError:  # that waiter's loop is closed: try the next one
                    continue


class _Hold:
    def __init__(self, limiter: RateLimiter, reservation: Reservation) -> None:
        self._limiter = limiter
        self._reservation = reservation

    async def __aenter__(self) -> Reservation:
        await self._limiter._acquire(self._reservation)
        return self._reservation

    async def __aexit__(self, *exc_info: object) -> None:
        self._limiter._release(self._reservation)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _rebucket(bucket: _Bucket | None, per_minute: float | None, now: float) -> _Bucket | None:
    if per_minute is None:
        return None
    if bucket is None:
        return _Bucket(per_minute, now)
    bucket.refill(now)
    fresh = _Bucket(per_minute, now)
    fresh.level = min(fresh.capacity, bucket.level)
    return fresh


def endpoint_key(url: str) -> str:
    """The endpoint a URL names, for sharing limits: scheme, host and port, and the path up to the API root
    (``.../v1`` and ``.../v1/chat/completions`` are one endpoint), without query or credentials."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    netloc = f"{host}:{parts.port}" if parts.port else host
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    return urlunsplit((parts.scheme.lower(), netloc, path, "", ""))


class LimiterRegistry:
    """One :class:`RateLimiter` per endpoint. Asking again for an endpoint with other limits tightens its limiter
    to the tighter of each limit, so every judge's limits hold."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._limiters: dict[str, RateLimiter] = {}

    def get(self, url: str, limits: EndpointLimits | None = None) -> RateLimiter:
        key = endpoint_key(url)
        with self._lock:
            limiter = self._limiters.get(key)
            if limiter is None:
                limiter = self._limiters[key] = RateLimiter(limits)
                return limiter
        if limits is not None and limits != limiter.limits:
            tighter = limiter.limits.tightest(limits)
            if tighter != limiter.limits:
                limiter.configure(tighter)
        return limiter

    def clear(self) -> None:
        with self._lock:
            self._limiters.clear()


#: The process-wide registry :func:`limiter_for` uses.
LIMITERS = LimiterRegistry()


def limiter_for(url: str, limits: EndpointLimits | None = None) -> RateLimiter:
    """The limiter every judge calling ``url``'s endpoint shares (see :class:`LimiterRegistry`)."""
    return LIMITERS.get(url, limits)
