"""Panels: several judges asked the same items, their verdicts combined criterion by criterion.

A :class:`Panel` is itself a judge. Its members run concurrently; a member that raises is a failed member (its
verdicts abstain), it never propagates. For each criterion the panel combines the scores of the members whose verdict
on that criterion is valid (a finite score on the criterion's scale); failed members and invalid verdicts are left
out. Fewer than ``min_valid`` such members make the criterion abstain (``None``), never 0.

Aggregates, all independent of the members' order:

- ``mean``: the arithmetic mean (an exactly rounded sum, so no order changes a bit of it), never outside the
  scores it combines;
- ``median``: the middle value; for an even count, the mean of the two middle values;
- ``majority``: the most frequent score; a tie is broken by the median of the tied values rounded down to the nearest
  tied value (the lower of the two middle ones), so that ties are conservative: on a binary criterion a 1-1 tie
  gives 0.

On a ``binary`` or ``choices`` scale a mean or median that falls between two values of the scale is taken to the
nearer one, the lower when halfway: a score off its scale would make the rubric's total abstain. The exact figure is
in the criterion's reason.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from typing import Literal, Sequence

from proofgym.core import ErrorKind
from proofgym.judges._rubric import Criterion, Scale
from proofgym.judges._types import CriterionVerdict, Judge, JudgeItem, JudgeVerdict

PanelAggregate = Literal["mean", "median", "majority"]
PANEL_AGGREGATES: tuple[str, ...] = ("mean", "median", "majority")


def combine(scores: Sequence[float], aggregate: str) -> float:
    """``scores`` (at least one) combined by ``aggregate`` (see the module docstring); the order never matters."""
    if not scores:
        raise ValueError("combine needs at least one score")
    ordered = sorted(float(s) for s in scores)
    if aggregate == "mean":
        # Clamped: the rounded quotient of n equal scores can fall a bit outside them (3 x 0.9443...7 / 3).
        return min(max(math.fsum(ordered) / len(ordered), ordered[0]), ordered[-1])
    if aggregate == "median":
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    if aggregate == "majority":
        counts = Counter(ordered)
        top = max(counts.values())
        tied = sorted(value for value, count in counts.items() if count == top)
        return tied[(len(tied) - 1) // 2]
    raise ValueError(f"aggregate must be one of {', '.join(PANEL_AGGREGATES)}, got {aggregate!r}")


def on_scale(value: float, scale: Scale) -> float:
    """``value`` taken to the nearest value of a discrete (binary / choices) scale, the lower when halfway; a bounded
    scale keeps it."""
    if scale.kind == "bounded":
        return value
    values = (0.0, 1.0) if scale.kind == "binary" else tuple(sorted(scale.choices))
    return min(values, key=lambda v: (abs(v - value), v))


class Panel:
    """A judge made of ``judges``: each item is judged by every member and combined per criterion by ``aggregate``
    (``"mean"``, ``"median"`` or ``"majority"``; see the module docstring) over at least ``min_valid`` valid member
    verdicts. The verdict's ``meta["members"]`` holds each member's verdict, ``calls`` all their calls."""

    def __init__(self, judges: Sequence[Judge], *, aggregate: PanelAggregate = "mean", min_valid: int = 1,
                 name: str | None = None) -> None:
        judges = tuple(judges)
        if not judges:
            raise ValueError("a Panel needs at least one judge")
        if aggregate not in PANEL_AGGREGATES:
            raise ValueError(f"Panel aggregate must be one of {', '.join(PANEL_AGGREGATES)}, got {aggregate!r}")
        if isinstance(min_valid, bool) or not isinstance(min_valid, int) or not 1 <= min_valid <= len(judges):
            raise ValueError(f"Panel min_valid must be an integer from 1 to the {len(judges)} judges, "
                             f"got {min_valid!r}")
        self.judges = judges
        self.aggregate = aggregate
        self.min_valid = min_valid
        self.name = name or f"panel:{aggregate}[{','.join(sorted(j.name for j in judges))}]"

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        items = list(items)
        if not items:
            return []
        answers = await asyncio.gather(*(self._member(judge, items) for judge in self.judges))
        return [self._combine(item, [answer[index] for answer in answers]) for index, item in enumerate(items)]

    async def _member(self, judge: Judge, items: list[JudgeItem]) -> list[JudgeVerdict]:
        """The member's verdicts, or failed ones when it raises or answers the wrong number of verdicts."""
        name = str(getattr(judge, "name", type(judge).__name__))
        try:
            verdicts = list(await judge.judge(items))
        except Exception as exc:  # a member's failure is that member's abstention, never the panel's crash
            reason = f"judge {name} raised {type(exc).__name__}: {exc}"[:500]
            return [JudgeVerdict.failed(name, item.rubric, ErrorKind.CRASH.value, reason) for item in items]
        if len(verdicts) != len(items) or not all(isinstance(v, JudgeVerdict) for v in verdicts):
            reason = f"judge {name} answered {len(verdicts)} verdicts for {len(items)} items"
            return [JudgeVerdict.failed(name, item.rubric, ErrorKind.MALFORMED.value, reason) for item in items]
        return verdicts

    def _combine(self, item: JudgeItem, members: list[JudgeVerdict]) -> JudgeVerdict:
        # Sorted, so that the record (meta, calls) is as independent of the members' order as the scores are.
        members = sorted(members, key=lambda v: (v.judge, json.dumps(v.to_dict(), sort_keys=True, default=str)))
        criteria = tuple(self._criterion(criterion, members) for criterion in item.rubric.criteria)
        abstained = [c.id for c in criteria if not c.valid]
        error_kind = None
        if abstained:
            kinds = Counter(v.error_kind for v in members if v.error_kind is not None)
            error_kind = min(kinds, key=lambda k: (-kinds[k], k)) if kinds else ErrorKind.MALFORMED.value
        failed = sum(1 for v in members if not v.valid)
        reason = f"{self.aggregate} of {len(members)} judges ({len(members) - failed} fully valid)"
        if abstained:
            reason += f"; fewer than {self.min_valid} valid verdicts on {', '.join(abstained)}: abstains"
        return JudgeVerdict(
            judge=self.name, criteria=criteria, error_kind=error_kind, reason=reason,
            calls=tuple(call for v in members for call in v.calls),
            relative=any(v.relative for v in members), cached=all(v.cached for v in members),
            meta={"aggregate": self.aggregate, "min_valid": self.min_valid,
                  "members": [v.to_dict() for v in members]})

    def _criterion(self, criterion: Criterion, members: list[JudgeVerdict]) -> CriterionVerdict:
        scores = []
        for verdict in members:
            for given in verdict.criteria:
                if given.id == criterion.id:
                    if given.score is not None and criterion.scale.problem(given.score) is None:
                        scores.append(float(given.score))
                    break
        if len(scores) < self.min_valid:
            return CriterionVerdict(criterion.id, None, f"{len(scores)} of {len(members)} judges gave a valid "
                                                        f"verdict, {self.min_valid} needed", self.name)
        exact = combine(scores, self.aggregate)
        score = on_scale(exact, criterion.scale)
        shown = ", ".join(f"{s:g}" for s in sorted(scores))
        reason = f"{self.aggregate} of {len(scores)} of {len(members)} judges [{shown}] = {exact:g}"
        if score != exact:
            reason += f", taken to {score:g} on the scale"
        return CriterionVerdict(criterion.id, score, reason, self.name)
