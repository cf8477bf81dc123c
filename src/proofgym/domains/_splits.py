"""Train / held-out splits of a domain's records, stratified by deciding rule, near-duplicates kept on one side.

Records are grouped by their **normalised facts** (text trimmed and case-folded, numbers rounded to
:data:`NEAR_DIGITS` significant digits): two records in one group are near-duplicates and always land on the same
side. Each group gets a score in [0, 1) from a hash of ``(split_seed, its normalised facts)``; a group is held out
when its score is below ``heldout_share``. Then, per branch (the deciding rule), so that every branch with two or
more groups is present on both sides: a branch with no held-out group has its lowest-scored group held out, and a
branch with no train group has its highest-scored group moved to train. A branch of one group (one record, or only
near-duplicates) stays in train.

The rule needs, per branch, only its lowest and highest scored groups and whether each side has one, so
:class:`SplitPlan` is built in one streamed pass over any number of records and then decides each record alone:
the same rule in memory and over a file of millions of rows.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Split = Literal["train", "heldout"]

#: Significant digits a number keeps when records are compared for near-duplicates.
NEAR_DIGITS = 3


def near_key(facts: Mapping[str, Any]) -> str:
    """The record's facts, normalised: near-duplicate records have the same key."""
    normal: dict[str, Any] = {}
    for name in sorted(facts):
        value = facts[name]
        if isinstance(value, bool) or value is None:
            normal[name] = value
        elif isinstance(value, (int, float)):
            normal[name] = _round(float(value))
        else:
            normal[name] = " ".join(str(value).split()).casefold()
    return json.dumps(normal, sort_keys=True)


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    digits = NEAR_DIGITS - 1 - math.floor(math.log10(abs(value)))
    return round(value, digits) + 0.0


def group_score(key: str, seed: int) -> float:
    """The group's place in [0, 1), the same for the same key and seed on every machine."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


@dataclass
class _Branch:
    low: tuple[float, str] | None = None
    high: tuple[float, str] | None = None
    heldout: bool = False
    train: bool = False


@dataclass
class SplitPlan:
    """Decides each record's side; :meth:`add` every record first (a streamed pass), then ask :meth:`side`."""

    heldout_share: float
    seed: int = 0
    _branches: dict[str, _Branch] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.heldout_share < 1:
            raise ValueError(f"heldout_share must be at least 0 and below 1, got {self.heldout_share}")

    def add(self, branch: str, key: str) -> None:
        """Note one record of ``branch`` whose :func:`near_key` is ``key``."""
        score = group_score(key, self.seed)
        state = self._branches.setdefault(branch, _Branch())
        point = (score, key)
        if state.low is None or point < state.low:
            state.low = point
        if state.high is None or point > state.high:
            state.high = point
        if score < self.heldout_share:
            state.heldout = True
        else:
            state.train = True

    def side(self, branch: str, key: str) -> Split:
        """The side of a record of ``branch`` with key ``key`` (one of those added)."""
        state = self._branches[branch]
        score = group_score(key, self.seed)
        several = state.low is not None and state.high is not None and state.low[1] != state.high[1]
        if several and self.heldout_share > 0:
            if not state.heldout and state.low is not None and key == state.low[1]:
                return "heldout"
            if not state.train and state.high is not None and key == state.high[1]:
                return "train"
        return "heldout" if score < self.heldout_share else "train"


def split_sides(items: Iterable[tuple[str, Mapping[str, Any]]], heldout_share: float,
                seed: int = 0) -> list[Split]:
    """The side of each ``(branch, facts)`` pair, in order (a list held in memory: for a streamed file use
    :class:`SplitPlan` over two passes)."""
    keyed = [(branch, near_key(facts)) for branch, facts in items]
    plan = SplitPlan(heldout_share, seed)
    for branch, key in keyed:
        plan.add(branch, key)
    return [plan.side(branch, key) for branch, key in keyed]
