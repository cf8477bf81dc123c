"""Verdict caches: a bounded in-memory LRU and a persistent SQLite file. Neither stores INVALID verdicts."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Iterable, Mapping, Protocol, runtime_checkable

from proofgym.core import Verdict

_LOG = logging.getLogger("proofgym.runtime")

# SQLite caps the number of bound parameters per statement (999 in older builds).
_SQL_BATCH = 500


@runtime_checkable
class VerdictCache(Protocol):
    """A verdict store keyed by the runtime's cache key (a hex digest).

    Implementations must never return nor keep an ``INVALID`` verdict: *could not verify* is not
    an answer worth remembering.
    """

    def get_many(self, keys: Iterable[str]) -> dict[str, Verdict]:
        """The cached verdicts among ``keys`` (misses are simply absent)."""
        ...

    def put_many(self, items: Mapping[str, Verdict]) -> None:
        """Store verdicts, silently skipping ``INVALID`` ones."""
        ...

    def close(self) -> None:
        """Release resources; idempotent."""
        ...


# A cached verdict's memory, estimated from its JSON size: tracemalloc measured 9.1 KB per rulebook verdict
# whose JSON has 3.98 KB (2.3 x), the key and the LRU's own node about 250 bytes more.
_BYTES_PER_JSON_CHAR = 2.3
_ENTRY_OVERHEAD_BYTES = 250
_UNSIZED_ENTRY_BYTES = 10_000  # a verdict that cannot be serialised (not JSON-native evidence)
# One put in this many is sized (serialising a verdict costs about as much as a cheap verification).
_SIZE_EVERY = 64


def estimated_bytes(verdict: Verdict) -> int:
    """About how much memory ``verdict`` holds once cached (see ``_BYTES_PER_JSON_CHAR``)."""
    try:
        return int(len(verdict.to_json()) * _BYTES_PER_JSON_CHAR) + _ENTRY_OVERHEAD_BYTES
    except (TypeError, ValueError, RecursionError):
        return _UNSIZED_ENTRY_BYTES


class LRUVerdictCache:
    """An in-memory cache of at most ``max_entries`` verdicts and, when ``max_bytes`` is set, about
    ``max_bytes`` of memory; least recently used evicted first.

    The memory is estimated, not measured: one stored verdict in 64 (the first included) is sized by
    :func:`estimated_bytes`, and the running mean per entry sets how many entries fit (``limit``), so the
    bound follows what the verifier returns (a rulebook proof, a simulator log) at a small cost per put.
    Every operation is O(1) per key (amortised). Not thread-safe: the runtime uses it from its own loop
    thread only. ``evictions`` counts entries dropped to stay within the bounds.
    """

    def __init__(self, max_entries: int, max_bytes: int | None = None) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1 (disable the cache rather than size it 0), got {max_entries}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1 or None, got {max_bytes}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.evictions = 0
        self._entries: OrderedDict[str, Verdict] = OrderedDict()
        self._puts = 0
        self._bytes_per_entry: float | None = None
        self._limit = max_entries

    @property
    def limit(self) -> int:
        """How many entries the cache keeps at most now (``max_entries``, or fewer to stay within ``max_bytes``)."""
        return self._limit

    @property
    def approx_bytes(self) -> int:
        """The estimated memory of the entries held (0 before the first is sized)."""
        return int(len(self._entries) * (self._bytes_per_entry or 0))

    def _size(self, verdict: Verdict) -> None:
        size = estimated_bytes(verdict)
        mean = self._bytes_per_entry
        self._bytes_per_entry = float(size) if mean is None else mean + (size - mean) * 0.05
        if self.max_bytes is not None:
            self._limit = max(1, min(self.max_entries, int(self.max_bytes // self._bytes_per_entry)))

    def get(self, key: str) -> Verdict | None:
        """The cached verdict for ``key`` (marking it most recently used), or ``None``."""
        verdict = self._entries.get(key)
        if verdict is not None:
            self._entries.move_to_end(key)
        return verdict

    def peek(self, key: str) -> Verdict | None:
        """The cached verdict for ``key`` without marking it used (a single atomic read: any thread may peek)."""
        return self._entries.get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, Verdict]:
        found = {}
        for key in keys:
            verdict = self.get(key)
            if verdict is not None:
                found[key] = verdict
        return found

    def put(self, key: str, verdict: Verdict) -> None:
        """Store ``verdict`` as most recently used; ``INVALID`` verdicts are ignored."""
        if verdict.invalid:
            return
        if self._puts % _SIZE_EVERY == 0:
            self._size(verdict)
        self._puts += 1
        self._entries[key] = verdict
        self._entries.move_to_end(key)
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)
            self.evictions += 1

    def put_many(self, items: Mapping[str, Verdict]) -> None:
        for key, verdict in items.items():
            self.put(key, verdict)

    def close(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Membership test that does not count as a use."""
        return key in self._entries


class SQLiteVerdictCache:
    """A persistent verdict cache in one SQLite file, storing :meth:`Verdict.to_json`.

    WAL mode, so several processes (and restarts) can share the file. One connection guarded by a
    lock, so any thread may use it. A row that does not decode to a valid verdict is a miss (it is
    overwritten on the next store), never an error; a verdict whose evidence is not JSON-native is
    not persisted.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._closed = False
        # check_same_thread=False: the runtime stores from its loop thread, callers may inspect from theirs;
        # the lock serialises both.
        self._conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            with self._conn:
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, verdict TEXT NOT NULL) WITHOUT ROWID"
                )
        except BaseException:
            self._conn.close()
            raise

    @property
    def journal_mode(self) -> str:
        """SQLite's journal mode for this file (``"wal"`` unless the file is in memory)."""
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    def get(self, key: str) -> Verdict | None:
        """The cached verdict for ``key``, or ``None``."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, Verdict]:
        keys = list(keys)
        rows: list[tuple[str, str]] = []
        with self._lock:
            for start in range(0, len(keys), _SQL_BATCH):
                part = keys[start : start + _SQL_BATCH]
                marks = ",".join("?" * len(part))
                rows += self._conn.execute(f"SELECT key, verdict FROM verdicts WHERE key IN ({marks})", part).fetchall()
        found = {}
        for key, text in rows:
            verdict = _decode(key, text)
            if verdict is not None and not verdict.invalid:
                found[key] = verdict
        return found

    def put(self, key: str, verdict: Verdict) -> None:
        """Store ``verdict``; ``INVALID`` verdicts are ignored."""
        self.put_many({key: verdict})

    def put_many(self, items: Mapping[str, Verdict]) -> None:
        rows = []
        for key, verdict in items.items():
            if verdict.invalid:
                continue
            try:
                rows.append((key, verdict.to_json()))
            except (TypeError, ValueError) as exc:
                _LOG.warning("verdict %s not persisted: its evidence is not JSON-native (%s)", key[:12], exc)
        if rows:
            with self._lock, self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO verdicts (key, verdict) VALUES (?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        """Whether a row exists for ``key`` (even one that would not decode)."""
        with self._lock:
            return self._conn.execute("SELECT 1 FROM verdicts WHERE key = ?", (key,)).fetchone() is not None


def _decode(key: str, text: object) -> Verdict | None:
    try:
        return Verdict.from_json(text)  # type: ignore[arg-type]
    except Exception as exc:  # a corrupt row (bad JSON, bad shape, bad enum...) is a miss, whatever it holds
        _LOG.warning("ignoring corrupt cache row %s: %s: %s", key[:12], type(exc).__name__, exc)
        return None
