"""What a judge is given and what it returns: the contract every judge (programmatic, LLM, panel, relative) keeps."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, Sequence, runtime_checkable

from proofgym.judges._rubric import Rubric
from proofgym.traces import SessionTrace

Level = Literal["event", "outcome"]


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One thing to judge against ``rubric`` (only the criteria this judge is asked).

    ``candidate`` is the rendered, untrusted text the judge reads: the whole trajectory (outcome level) or one
    decision with a bounded window of what came before (event level); nothing of it may be obeyed. ``trace`` and
    ``step_index`` (event level: the decision judged) are there for judges that compute from the trace. ``group``
    names the GRPO group the trajectory belongs to (relative judges rank within it).
    """

    level: Level
    rubric: Rubric
    candidate: str
    trace: SessionTrace | None = None
    step_index: int | None = None
    group: str | None = None


@dataclass(frozen=True, slots=True)
class CriterionVerdict:
    """A judge's verdict on one criterion: ``score`` on the criterion's scale, reason first; ``score`` is ``None``
    exactly when the verdict is invalid (the judge could not give one), which abstains, never counts as 0."""

    id: str
    score: float | None
    reason: str = ""
    judge: str = ""

    def __post_init__(self) -> None:
        if self.score is not None and (isinstance(self.score, bool) or not isinstance(self.score, (int, float))
                                       or not math.isfinite(self.score)):
            raise ValueError(f"CriterionVerdict.score must be a finite number or None, got {self.score!r}")

    @property
    def valid(self) -> bool:
        return self.score is not None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason, "score": self.score, "judge": self.judge}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CriterionVerdict:
        score = data.get("score")
        return cls(id=str(data["id"]), score=None if score is None else float(score),
                   reason=str(data.get("reason") or ""), judge=str(data.get("judge") or ""))


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """A judge's answer for one :class:`JudgeItem`: one :class:`CriterionVerdict` per criterion asked, in the
    rubric's order. ``valid`` is false when the judge gave no usable answer (after its retry): every criterion's
    score is then ``None``, ``error_kind`` (an :class:`~proofgym.core.ErrorKind` value) and ``reason`` say why.
    ``calls`` records every model call made (request, response, tokens, latency), for the trace store.
    ``relative`` marks scores that are comparable only within ``JudgeItem.group``."""

    judge: str
    criteria: tuple[CriterionVerdict, ...]
    error_kind: str | None = None
    reason: str = ""
    calls: tuple[Mapping[str, Any], ...] = ()
    relative: bool = False
    cached: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.error_kind is None and all(c.valid for c in self.criteria)

    def scores(self) -> dict[str, float | None]:
        return {c.id: c.score for c in self.criteria}

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "valid": self.valid, "criteria": [c.to_dict() for c in self.criteria],
                "error_kind": self.error_kind, "reason": self.reason, "calls": [dict(c) for c in self.calls],
                "relative": self.relative, "cached": self.cached, "meta": dict(self.meta)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeVerdict:
        return cls(judge=str(data["judge"]), criteria=tuple(CriterionVerdict.from_dict(c) for c in data["criteria"]),
                   error_kind=data.get("error_kind"), reason=str(data.get("reason") or ""),
                   calls=tuple(data.get("calls") or ()), relative=bool(data.get("relative")),
                   cached=bool(data.get("cached")), meta=dict(data.get("meta") or {}))

    @classmethod
    def failed(cls, judge: str, rubric: Rubric, error_kind: str, reason: str, *,
               calls: Sequence[Mapping[str, Any]] = (), relative: bool = False) -> JudgeVerdict:
        """An invalid verdict: every criterion of ``rubric`` abstains."""
        return cls(judge=judge, criteria=tuple(CriterionVerdict(c.id, None, "", judge) for c in rubric.criteria),
                   error_kind=str(error_kind), reason=reason, calls=tuple(calls), relative=relative)


@runtime_checkable
class Judge(Protocol):
    """Anything that judges: ``name`` (stable, e.g. ``"llm:model@prompt-v1"``) and an async ``judge`` returning one
    :class:`JudgeVerdict` per item, in order. It never raises for anything a judged model or a judge endpoint does:
    failures come back as invalid verdicts."""

    name: str

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]: ...
