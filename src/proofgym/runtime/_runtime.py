"""The verification runtime: the one place every verifier runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import json
import logging
import random
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from proofgym.core import Claim, ErrorKind, Verdict, invalid, text_bytes
from proofgym.runtime._breaker import BreakerState, CircuitBreaker
from proofgym.runtime._cache import LRUVerdictCache, SQLiteVerdictCache, VerdictCache
from proofgym.runtime._config import RuntimeConfig
from proofgym.runtime._executors import Executor, InProcessExecutor, ProcessExecutor
from proofgym.runtime._metrics import BatchMetrics, MetricsRecorder, RuntimeMetrics
from proofgym.verifiers import TransientVerifierError, Verifier

_LOG = logging.getLogger("proofgym.runtime")

# How long a timed-out or cancelled call may take to honour its cancellation before it is abandoned.
_CANCEL_GRACE_S = 1.0


@dataclass(frozen=True, slots=True)
class _Failure:
    """A verifier call that produced no answer as a whole."""

    kind: ErrorKind
    reason: str
    verify_s: float


@dataclass(slots=True)
class _CallResult:
    verdicts: list[Verdict | None]  # per claim; None where unresolved
    unresolved: list[int]  # indices the failure applies to
    failure: _Failure | None
    admitted: bool  # the breaker let the call through
    trial: bool  # ... as its half-open trial


class VerificationRuntime:
    """Runs one verifier: caching, de-duplication, batching, bounded concurrency, timeouts, retries,
    poison isolation and a circuit breaker, on a private event loop in a daemon thread.

    ``verify_many`` never raises because of anything the verifier does: every failure becomes an
    ``INVALID`` verdict with an :class:`~proofgym.core.ErrorKind` and a reason. Returned verdicts carry
    ``timings["verify_s"]`` (execution time of the verifier call that produced them; 0 when no call
    was made) on top of the verifier's own timings, and ``verifier="name@version"`` when the verifier
    left it empty. Cache hits are returned as stored, timings of the original call included.

    ``executor`` (default: from ``config.executor``) and ``cache`` (the persistent tier; default: a
    :class:`SQLiteVerdictCache` at ``config.cache_path`` when set) override the config; the runtime
    closes only what it created. ``clock`` drives the circuit breaker.
    """

    def __init__(
        self,
        verifier: Verifier,
        config: RuntimeConfig | None = None,
        *,
        executor: Executor | None = None,
        cache: VerdictCache | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(verifier, Verifier):
            raise TypeError(f"{verifier!r} is not a Verifier (needs name, version and async verify_many)")
        self._config = config = config or RuntimeConfig()
        if cache is not None and config.cache_path is not None:
            raise ValueError("pass either cache= or config.cache_path, not both")
        self._verifier = verifier
        # Read once: the cache key and the label must not drift if the verifier object changes later.
        self._name, self._version = str(verifier.name), str(verifier.version)
        self._label = f"{self._name}@{self._version}"
        self._uses_decision = bool(getattr(verifier, "uses_decision", True))
        # Keys hash (name, version) then the canonical claim: the prefix is hashed once, copied per claim.
        self._key_prefix = hashlib.sha256(json.dumps([self._name, self._version]).encode("utf-8") + b"\n")
        max_batch = getattr(verifier, "max_batch_size", None)
        if max_batch is not None and (not isinstance(max_batch, int) or max_batch < 1):
            raise ValueError(f"verifier.max_batch_size must be a positive int or None, got {max_batch!r}")
        self._chunk_size = min(config.batch_size, max_batch or config.batch_size)

        self._owns_executor = executor is None
        if executor is None:
            executor = _build_executor(config)
        self._executor = executor
        capacity = getattr(executor, "max_concurrency", None)
        self._semaphore = asyncio.Semaphore(min(config.max_concurrency, capacity or config.max_concurrency))

        max_bytes = None if config.cache_max_mb is None else max(1, int(config.cache_max_mb * (1 << 20)))
        self._memory = LRUVerdictCache(config.cache_size, max_bytes) if config.cache_size else None
        self._owns_cache = cache is None
        self._persistent = cache if cache is not None else (
            SQLiteVerdictCache(config.cache_path) if config.cache_path else None
        )

        self._breaker = CircuitBreaker(config.breaker_failure_threshold, config.breaker_reset_after_s, clock)
        self._metrics = MetricsRecorder()
        self._rng = random.Random()
        self._lock = threading.Lock()  # guards loop start-up and closing
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._finalizer: weakref.finalize[[asyncio.AbstractEventLoop], VerificationRuntime] | None = None
        self._batches: set[asyncio.Task[Any]] = set()

    # -- public surface ------------------------------------------------------------------------------

    @property
    def config(self) -> RuntimeConfig:
        return self._config

    @property
    def verifier(self) -> Verifier:
        return self._verifier

    @property
    def executor(self) -> Executor:
        return self._executor

    @property
    def breaker(self) -> CircuitBreaker:
        return self._breaker

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (verifying then raises ``RuntimeError``)."""
        return self._closed

    @property
    def memory_cache(self) -> LRUVerdictCache | None:
        """The in-memory tier (``None`` when ``cache_size`` is 0)."""
        return self._memory

    @property
    def persistent_cache(self) -> VerdictCache | None:
        """The persistent tier (``None`` without ``cache_path`` or ``cache=``)."""
        return self._persistent

    def cache_key(self, claim: Claim) -> str:
        """The claim's cache key: SHA-256 over the verifier's name and version and the claim's canonical key."""
        digest = self._key_prefix.copy()
        digest.update(text_bytes(claim.canonical(include_decision=self._uses_decision)))
        return digest.hexdigest()

    def cache_lookup(self, claim: Claim) -> Verdict | None:
        """The cached verdict for ``claim`` (memory tier, then persistent tier), or ``None``; verifies nothing.

        Callable from any thread: it peeks at the memory tier without counting as a use.
        """
        key = self.cache_key(claim)
        if self._memory is not None:
            verdict = self._memory.peek(key)
            if verdict is not None:
                return verdict
        if self._persistent is not None:
            verdict = self._persistent.get_many([key]).get(key)
            if verdict is not None and not verdict.invalid:
                return verdict
        return None

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        """Verify ``claims`` (one verdict per claim, in order); awaitable from any event loop."""
        claims, keys = self._prepare(claims)
        if self._loop is not None and asyncio.get_running_loop() is self._loop:
            # Awaited on the runtime's own loop (a verifier using its runtime): no hop needed.
            return await self._verify_batch(claims, keys)
        return await asyncio.wrap_future(self._submit(claims, keys))

    def verify_many_sync(self, claims: Sequence[Claim]) -> list[Verdict]:
        """Blocking :meth:`verify_many`, callable from any thread, even one running an event loop,
        except the runtime's own loop thread (it would deadlock there: await :meth:`verify_many`)."""
        if threading.current_thread() is self._thread:
            raise RuntimeError(
                "verify_many_sync() called on the VerificationRuntime's own event-loop thread, where blocking "
                "would deadlock; await verify_many() instead"
            )
        claims, keys = self._prepare(claims)
        future = self._submit(claims, keys)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # interrupted (e.g. KeyboardInterrupt): do not leave the work running
            raise

    def metrics(self) -> RuntimeMetrics:
        """Cumulative metrics since the runtime started (outcomes count when each ``verify_many`` ends)."""
        snapshot = self._metrics.snapshot(self._breaker.state.value)
        memory = self._memory
        if memory is None:
            return snapshot
        return dataclasses.replace(snapshot, cache_entries=len(memory), cache_bytes=memory.approx_bytes,
                                   cache_max_bytes=memory.max_bytes)

    def last_batch_metrics(self) -> RuntimeMetrics:
        """Metrics of the most recently finished ``verify_many`` call."""
        return self._metrics.last_batch()

    def close(self) -> None:
        """Stop the loop thread and release what the runtime created; idempotent.

        Calls still in flight end with ``INVALID`` verdicts (``ErrorKind.CANCELLED``)."""
        with self._lock:
            if self._closed:
                return
            if threading.current_thread() is self._thread:
                raise RuntimeError("close() called on the VerificationRuntime's own event-loop thread")
            self._closed = True
            loop, thread = self._loop, self._thread
        try:
            if loop is not None and thread is not None:
                assert self._finalizer is not None
                if self._finalizer.detach() is None:
                    # The finalizer already stopped the loop (interpreter exit ran it first): only
                    # the executor is left to release.
                    thread.join(timeout=_CANCEL_GRACE_S)
                    if self._owns_executor:
                        self._executor.close()
                    return
                try:
                    asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result()
                finally:
                    loop.call_soon_threadsafe(loop.stop)
                    thread.join()
            elif self._owns_executor:
                self._executor.close()
        finally:
            if self._owns_cache and self._persistent is not None:
                self._persistent.close()

    def __enter__(self) -> VerificationRuntime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"VerificationRuntime({self._label}, breaker={self._breaker.state.value}, closed={self._closed})"

    # -- the loop thread -----------------------------------------------------------------------------

    def _prepare(self, claims: Sequence[Claim]) -> tuple[list[Claim], list[str]]:
        # Copied and hashed in the caller's thread: later changes to the caller's list do not matter,
        # a non-claim is the caller's bug and raises here, and hashing spreads over callers.
        claims = list(claims)
        for claim in claims:
            if not isinstance(claim, Claim):
                raise TypeError(f"verify_many expects Claim objects, got {type(claim).__name__}")
        return claims, [self.cache_key(claim) for claim in claims]

    def _submit(self, claims: list[Claim], keys: list[str]) -> concurrent.futures.Future[list[Verdict]]:
        with self._lock:
            if self._closed:
                raise RuntimeError("VerificationRuntime is closed")
            if self._loop is None:
                self._start_loop()
            assert self._loop is not None
            return asyncio.run_coroutine_threadsafe(self._verify_batch(claims, keys), self._loop)

    def _start_loop(self) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=_run_loop, args=(loop,), name=f"proofgym-runtime-{self._label}", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        # A runtime dropped without close() still stops its thread (the thread holds no reference to it).
        self._finalizer = weakref.finalize(self, _stop_loop, loop)

    async def _shutdown(self) -> None:
        batches = list(self._batches)
        for task in batches:
            task.cancel()
        await asyncio.gather(*batches, return_exceptions=True)
        # Verifier calls abandoned for ignoring cancellation (and tasks a verifier left behind) get one
        # last request to stop before the loop goes.
        leftovers = asyncio.all_tasks() - {asyncio.current_task()}
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.wait(leftovers, timeout=_CANCEL_GRACE_S)
        if self._owns_executor:
            self._executor.close()
        loop = asyncio.get_running_loop()
        await loop.shutdown_asyncgens()
        await loop.shutdown_default_executor()

    # -- one verify_many call ------------------------------------------------------------------------

    async def _verify_batch(self, claims: list[Claim], keys: list[str]) -> list[Verdict]:
        task = asyncio.current_task()
        assert task is not None
        self._batches.add(task)
        stats = self._metrics.batch()
        start = time.perf_counter()
        unique: dict[str, Claim] = {}  # identical keys share one verification: the first claim stands for all
        for key, claim in zip(keys, claims):
            unique.setdefault(key, claim)
        verdicts: dict[str, Verdict] = {}
        try:
            stats.count("dedup_saves", len(keys) - len(unique))
            try:
                verdicts.update(self._cache_get(list(unique), stats))
                misses = [(key, claim) for key, claim in unique.items() if key not in verdicts]
                size = self._chunk_size
                await asyncio.gather(
                    *(self._verify_chunk(misses[i : i + size], verdicts, stats) for i in range(0, len(misses), size))
                )
            except asyncio.CancelledError:
                if not self._closed:
                    raise  # the caller gave up
                closed = invalid(ErrorKind.CANCELLED, "runtime closed before the verification finished",
                                 verifier=self._label, verify_s=0.0)
                for key in unique:
                    verdicts.setdefault(key, closed)
            result = [verdicts[key] for key in keys]
            stats.finish(result, time.perf_counter() - start, self._breaker.state.value)
            return result
        finally:
            self._batches.discard(task)

    async def _verify_chunk(self, items: list[tuple[str, Claim]], verdicts: dict[str, Verdict],
                            stats: BatchMetrics) -> None:
        results = await self._resolve([claim for _, claim in items], stats, retry_whole_call=True)
        fresh = {key: verdict for (key, _), verdict in zip(items, results)}
        verdicts.update(fresh)
        self._cache_put(fresh, stats)

    # -- caches --------------------------------------------------------------------------------------

    def _cache_get(self, keys: list[str], stats: BatchMetrics) -> dict[str, Verdict]:
        found: dict[str, Verdict] = {}
        if self._memory is not None:
            found = self._memory.get_many(keys)
            stats.count("cache_hits_memory", len(found))
        if self._persistent is not None and len(found) < len(keys):
            try:
                hits = self._persistent.get_many([key for key in keys if key not in found])
            except Exception as exc:  # a broken cache costs a verification, never the batch
                _LOG.warning("persistent cache read failed: %s: %s", type(exc).__name__, exc)
                stats.count("cache_errors")
                hits = {}
            # Never trust a shared store to have kept INVALID out.
            hits = {key: verdict for key, verdict in hits.items() if not verdict.invalid}
            stats.count("cache_hits_persistent", len(hits))
            if self._memory is not None:
                self._memory_put(hits, stats)
            found.update(hits)
        return found

    def _cache_put(self, verdicts: dict[str, Verdict], stats: BatchMetrics) -> None:
        keep = {key: verdict for key, verdict in verdicts.items() if not verdict.invalid}
        if not keep:
            return
        if self._memory is not None:
            self._memory_put(keep, stats)
        if self._persistent is not None:
            try:
                self._persistent.put_many(keep)
            except Exception as exc:
                _LOG.warning("persistent cache write failed: %s: %s", type(exc).__name__, exc)
                stats.count("cache_errors")

    def _memory_put(self, verdicts: dict[str, Verdict], stats: BatchMetrics) -> None:
        assert self._memory is not None
        before = self._memory.evictions
        self._memory.put_many(verdicts)
        stats.count("cache_evictions", self._memory.evictions - before)

    # -- calls: poison isolation, retries, breaker, timeout ------------------------------------------

    async def _resolve(self, claims: list[Claim], stats: BatchMetrics, *, retry_whole_call: bool) -> list[Verdict]:
        """Verdicts for ``claims``, bisecting a call that fails as a whole so one bad claim cannot sink
        the others.

        Whole-call failures are retried at the top (the chunk) and at single claims; the intermediate
        calls of the bisection are diagnostic and tried once, else a hanging claim would cost
        ``(retries + 1) * timeout`` at every level of the bisection.
        """
        call = await self._call(claims, stats, retry_whole_call=retry_whole_call)
        failure, verdicts = call.failure, call.verdicts
        bisect = failure is not None and len(call.unresolved) > 1 and failure.kind is not ErrorKind.BREAKER_OPEN
        if call.admitted:
            # The breaker hears about infrastructure health only: a call with any usable verdict
            # succeeded; a call about to be bisected is undecided (its halves tell).
            if any(v is not None and not v.invalid for v in verdicts):
                self._breaker.record_success()
            elif not bisect:
                self._breaker.record_failure()
            elif call.trial:
                self._breaker.release_trial()
        if failure is not None:
            if bisect:
                mid = len(call.unresolved) // 2
                halves = [call.unresolved[:mid], call.unresolved[mid:]]
                results = await asyncio.gather(*(
                    self._resolve([claims[i] for i in half], stats, retry_whole_call=len(half) == 1) for half in halves
                ))
                for half, result in zip(halves, results):
                    for i, verdict in zip(half, result):
                        verdicts[i] = verdict
            else:
                failed = invalid(failure.kind, failure.reason, verifier=self._label, verify_s=failure.verify_s)
                for i in call.unresolved:
                    verdicts[i] = failed
        return verdicts  # type: ignore[return-value]  # every index is resolved by now

    async def _call(self, claims: list[Claim], stats: BatchMetrics, *, retry_whole_call: bool) -> _CallResult:
        """One logical call: attempts with jittered exponential backoff on transient failures.

        A whole-call transient failure retries the call (when ``retry_whole_call``); transient
        ``INVALID`` items of an answer are retried on their own. The breaker admits the call once.
        """
        verdicts: list[Verdict | None] = [None] * len(claims)
        pending = list(range(len(claims)))
        failure: _Failure | None = None
        admitted = trial = False
        attempt = 0
        try:
            while True:
                async with self._semaphore:
                    if not admitted:
                        # Checked once the call holds a slot, so calls queued behind a dying backend
                        # do not go through after the breaker opened.
                        if not self._breaker.allow():
                            reason = f"circuit breaker open after repeated failures of {self._label}"
                            return _CallResult(verdicts, pending, _Failure(ErrorKind.BREAKER_OPEN, reason, 0.0),
                                               admitted=False, trial=False)
                        admitted, trial = True, self._breaker.state is BreakerState.HALF_OPEN
                    answer = await self._execute([claims[i] for i in pending], stats)
                if isinstance(answer, _Failure):
                    failure = answer
                    retry = retry_whole_call and failure.kind.transient
                else:
                    failure = None
                    for i, verdict in zip(pending, answer):
                        verdicts[i] = verdict
                    pending = [i for i in pending if _transient(verdicts[i])]
                    retry = bool(pending)
                # A breaker that opened meanwhile stops our retries too (unless we are its trial).
                if not retry or attempt >= self._config.retries or (
                    not trial and self._breaker.state is not BreakerState.CLOSED
                ):
                    break
                attempt += 1
                stats.count("retries")
                await asyncio.sleep(self._backoff_s(attempt))
        except asyncio.CancelledError:
            if trial:
                self._breaker.release_trial()
            raise
        # Without a whole-call failure, transient INVALID items that exhausted their retries are final.
        return _CallResult(verdicts, pending if failure else [], failure, admitted, trial)

    def _backoff_s(self, attempt: int) -> float:
        """Exponential backoff with equal jitter: uniform in [cap/2, cap], cap doubling per attempt."""
        cap = min(self._config.backoff_max_s, self._config.backoff_base_s * 2.0 ** min(attempt - 1, 60))
        return cap * (0.5 + 0.5 * self._rng.random())

    async def _execute(self, claims: list[Claim], stats: BatchMetrics) -> list[Verdict] | _Failure:
        """One attempt, under the timeout (the caller holds a concurrency slot, so queueing is not timed)."""
        stats.count("verifier_calls")
        stats.count("claims_sent", len(claims))
        start = time.perf_counter()
        task = asyncio.ensure_future(self._run_executor(claims))
        try:
            done, _ = await asyncio.wait({task}, timeout=self._config.timeout_s)
        except asyncio.CancelledError:
            await _cancel(task)
            raise
        elapsed = time.perf_counter() - start
        stats.latency(elapsed)
        if not done:
            await _cancel(task)
            stats.count("timeouts")
            return _Failure(ErrorKind.TIMEOUT, f"call of {len(claims)} claim(s) exceeded timeout_s="
                                               f"{self._config.timeout_s:g}", elapsed)
        try:
            raw = task.result()
        except (TransientVerifierError, ConnectionError) as exc:
            return _Failure(ErrorKind.OUTAGE, _describe(exc), elapsed)
        except TimeoutError as exc:
            stats.count("timeouts")
            return _Failure(ErrorKind.TIMEOUT, _describe(exc), elapsed)
        except asyncio.CancelledError:  # the verifier cancelled itself; we did not ask
            return _Failure(ErrorKind.CANCELLED, "verifier call was cancelled from inside", elapsed)
        except Exception as exc:
            return _Failure(ErrorKind.CRASH, _describe(exc), elapsed)
        return self._check_answer(raw, len(claims), elapsed)

    async def _run_executor(self, claims: list[Claim]) -> list[Any]:
        try:
            return await self._executor.run(self._verifier, claims)
        except (KeyboardInterrupt, SystemExit) as exc:
            # Raised by verifier code on our loop thread, these would otherwise stop the runtime's loop.
            raise RuntimeError(f"verifier raised {type(exc).__name__}") from exc

    def _check_answer(self, raw: Any, expected: int, elapsed: float) -> list[Verdict] | _Failure:
        if not isinstance(raw, (list, tuple)):
            return _Failure(ErrorKind.MALFORMED, f"verifier returned {type(raw).__name__}, expected a list of "
                                                 f"{expected} verdict(s)", elapsed)
        if len(raw) != expected:
            return _Failure(ErrorKind.MALFORMED, f"verifier returned {len(raw)} result(s) for {expected} claim(s)",
                            elapsed)
        return [
            item.stamped(self._label, verify_s=elapsed)
            if isinstance(item, Verdict)
            else invalid(ErrorKind.MALFORMED, f"verifier returned {type(item).__name__} instead of a Verdict",
                         verifier=self._label, verify_s=elapsed)
            for item in raw
        ]


def _build_executor(config: RuntimeConfig) -> Executor:
    if config.executor == "process":
        return ProcessExecutor(config.workers)
    if config.executor == "ray":
        from proofgym.runtime._ray import RayExecutor  # Ray is optional and heavy: imported only when chosen

        return RayExecutor.from_config(config.ray, config.workers)
    return InProcessExecutor()


def _transient(verdict: Verdict | None) -> bool:
    return verdict is not None and verdict.error_kind is not None and verdict.error_kind.transient


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel a verifier call and give it a grace period to stop; a call that ignores cancellation
    is abandoned rather than allowed to hold the runtime."""
    task.cancel()
    await asyncio.wait({task}, timeout=_CANCEL_GRACE_S)
    if not task.done():
        _LOG.warning("a verifier call ignored cancellation for %.1fs and was abandoned", _CANCEL_GRACE_S)
    # Its outcome is moot now; retrieve it so asyncio does not report it as lost.
    task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


def _stop_loop(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.call_soon_threadsafe(loop.stop)
    except RuntimeError:  # already closed
        pass
