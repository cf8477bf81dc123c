"""Difficulty by world traits (the reference's): trees and hostiles within 10 cells of the spawn point.

- ``easy``: at least 4 trees and no hostile;
- ``medium``: (not easy) at least 2 trees and at most 2 hostiles;
- ``hard``: the rest with at most 5 hostiles (a world with more is in no level).

A seed's traits need its world generated (most of a reset), so they are computed once per seed and kept: in this
process, and on disk in ``$XDG_CACHE_HOME/proofgym/crafter/traits-1.8.3.json`` (best effort; a file that is not a
regular private file of this user, or does not parse, is ignored and rewritten). With a ``difficulty`` an
environment's seed ``i`` is the ``i``-th world seed (counting from 0) of that level.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Callable

_LOG = logging.getLogger("proofgym.crafter")
_MAX_CACHE_BYTES = 8 << 20
_MAX_HOSTILES = 5


def difficulty_of(trees: int, hostiles: int) -> str | None:
    """The level of a world with these traits (``None``: more than 5 hostiles, in no level)."""
    if trees >= 4 and hostiles == 0:
        return "easy"
    if trees >= 2 and hostiles <= 2:
        return "medium"
    return "hard" if hostiles <= _MAX_HOSTILES else None


def default_cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "proofgym" / "crafter" / \
        "traits-1.8.3.json"


class TraitCache:
    """Each world seed's traits, computed by ``measure(seed)`` on first use and kept in memory and on disk."""

    def __init__(self, measure: Callable[[int], dict[str, int]], path: Path | None = None) -> None:
        self._measure = measure
        self.path = default_cache_path() if path is None else path
        self._traits: dict[int, dict[str, int]] = self._read()
        self._levels: dict[str, list[int]] = {}  # the seeds of each level found so far, in order
        self._scanned = -1  # every seed up to this one is in _levels
        self._lock = threading.Lock()
        self._scan_lock = threading.Lock()  # one scan at a time: _levels and _scanned
        self._dirty = False

    def traits(self, seed: int) -> dict[str, int]:
        with self._lock:
            found = self._traits.get(seed)
            if found is None:
                found = self._traits[seed] = self._measure(seed)
                self._dirty = True
            return dict(found)

    def seed_at(self, level: str, index: int, *, limit: int = 100_000) -> int:
        """The ``index``-th world seed of ``level``; ``ValueError`` when ``limit`` seeds hold fewer."""
        with self._scan_lock:
            while len(self._levels.get(level, ())) <= index:
                seed = self._scanned + 1
                if seed >= limit:
                    raise ValueError(f"difficulty: fewer than {index + 1} of the first {limit} worlds are {level}")
                traits = self.traits(seed)
                found = difficulty_of(traits["trees"], traits["hostiles"])
                if found is not None:
                    self._levels.setdefault(found, []).append(seed)
                self._scanned = seed
            self.flush()
            return self._levels[level][index]

    def flush(self) -> None:
        """Write the traits to disk when new ones were measured (best effort)."""
        with self._lock:
            if not self._dirty:
                return
            data = {str(seed): traits for seed, traits in sorted(self._traits.items())}
            self._dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.replace(temporary, self.path)
        except OSError as exc:
            _LOG.debug("could not store crafter world traits in %s: %s", self.path, exc)

    def _read(self) -> dict[int, dict[str, int]]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return {}
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022 \
                    or info.st_size > _MAX_CACHE_BYTES:
                return {}
            data = json.loads(os.read(fd, _MAX_CACHE_BYTES))
        except (OSError, ValueError):
            return {}
        finally:
            os.close(fd)
        traits: dict[int, dict[str, int]] = {}
        if isinstance(data, dict):
            for key, value in data.items():
                if key.isdigit() and isinstance(value, dict) and all(
                        type(value.get(name)) is int and value[name] >= 0 for name in ("trees", "hostiles")):
                    traits[int(key)] = {"trees": value["trees"], "hostiles": value["hostiles"]}
        return traits
