"""Runtime metrics: cumulative counters and per-batch snapshots."""

from __future__ import annotations

import math
import threading
from collections import Counter, deque
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Iterable, Mapping

from proofgym.core import Outcome, Verdict

# Latency percentiles come from the most recent calls only, so memory stays bounded on long runs.
LATENCY_RESERVOIR = 10_000


@dataclass(frozen=True, slots=True)
class RuntimeMetrics:
    """A snapshot of what a :class:`~proofgym.runtime.VerificationRuntime` did.

    ``claims`` counts every position passed to ``verify_many`` (duplicates included) and always equals
    ``certified + refuted + invalid``. ``dedup_saves`` counts positions answered by an identical claim
    in the same call; ``cache_hits_memory`` / ``cache_hits_persistent`` count distinct claims answered
    by the memory / SQLite cache. ``verifier_calls`` counts every attempt (retries and the sub-calls of
    poison isolation included) and ``claims_sent`` the claims they carried. Latencies are the
    execution times of verifier calls (queueing excluded) over the last 10,000 calls, ``None``
    before any call. ``verify_wall_s`` is the wall time spent inside ``verify_many``. ``cache_entries``,
    ``cache_bytes`` (estimated) and ``cache_max_bytes`` (``None``: no memory bound) describe the memory tier
    now, in the runtime's snapshots only (0 / ``None`` in a batch's).
    """

    claims: int = 0
    certified: int = 0
    refuted: int = 0
    invalid: int = 0
    invalid_by_kind: Mapping[str, int] = field(default_factory=dict)
    cache_hits_memory: int = 0
    cache_hits_persistent: int = 0
    cache_errors: int = 0
    cache_evictions: int = 0
    dedup_saves: int = 0
    verifier_calls: int = 0
    claims_sent: int = 0
    retries: int = 0
    timeouts: int = 0
    batches: int = 0
    breaker_state: str = "closed"
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    verify_wall_s: float = 0.0
    cache_entries: int = 0
    cache_bytes: int = 0
    cache_max_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["invalid_by_kind"] = dict(self.invalid_by_kind)
        return data


# The plain counters, i.e. every int field of RuntimeMetrics (annotations may be strings).
_GAUGES = ("cache_entries", "cache_bytes", "cache_max_bytes")
_COUNTERS = tuple(f.name for f in fields(RuntimeMetrics) if f.type in ("int", int) and f.name not in _GAUGES)


class _Tally:
    def __init__(self) -> None:
        self.counts = dict.fromkeys(_COUNTERS, 0)
        self.invalid_by_kind: Counter[str] = Counter()
        self.latencies: deque[float] = deque(maxlen=LATENCY_RESERVOIR)
        self.verify_wall_s = 0.0

    def snapshot(self, breaker_state: str) -> RuntimeMetrics:
        ordered = sorted(self.latencies)
        return RuntimeMetrics(
            **self.counts,
            invalid_by_kind=dict(sorted(self.invalid_by_kind.items())),
            breaker_state=breaker_state,
            latency_p50_s=_percentile(ordered, 0.50),
            latency_p95_s=_percentile(ordered, 0.95),
            verify_wall_s=self.verify_wall_s,
        )


def _percentile(ordered: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class MetricsRecorder:
    """Thread-safe accumulator: the runtime records from its loop, callers snapshot from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = _Tally()
        self._last = RuntimeMetrics()

    def batch(self) -> BatchMetrics:
        """Start recording one ``verify_many`` call."""
        return BatchMetrics(self)

    def snapshot(self, breaker_state: str) -> RuntimeMetrics:
        """Cumulative metrics since the runtime started."""
        with self._lock:
            return self._total.snapshot(breaker_state)

    def last_batch(self) -> RuntimeMetrics:
        """Metrics of the most recently finished ``verify_many`` call."""
        with self._lock:
            return self._last


class BatchMetrics:
    """Records one ``verify_many`` call into its own tally and the cumulative one at once."""

    def __init__(self, recorder: MetricsRecorder) -> None:
        self._recorder = recorder
        self._tally = _Tally()

    def count(self, name: str, n: int = 1) -> None:
        with self._recorder._lock:
            self._tally.counts[name] += n
            self._recorder._total.counts[name] += n

    def latency(self, seconds: float) -> None:
        with self._recorder._lock:
            self._tally.latencies.append(seconds)
            self._recorder._total.latencies.append(seconds)

    def finish(self, verdicts: Iterable[Verdict], wall_s: float, breaker_state: str) -> None:
        """Count the call's outcomes (one per position) and publish it as the last batch."""
        outcomes: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        for verdict in verdicts:
            outcomes[verdict.outcome.value] += 1
            if verdict.error_kind is not None:
                kinds[verdict.error_kind.value] += 1
        with self._recorder._lock:
            for tally in (self._tally, self._recorder._total):
                for outcome in Outcome:
                    tally.counts[outcome.value] += outcomes[outcome.value]
                tally.counts["claims"] += sum(outcomes.values())
                tally.counts["batches"] += 1
                tally.invalid_by_kind.update(kinds)
                tally.verify_wall_s += wall_s
            self._recorder._last = self._tally.snapshot(breaker_state)
