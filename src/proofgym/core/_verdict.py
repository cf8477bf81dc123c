"""The one result type every verifier returns."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Mapping


class Outcome(StrEnum):
    """How a verification ended. There are three outcomes, never two.

    ``INVALID`` means *could not verify* (timeout, crash, outage, open breaker, malformed backend
    answer). It must never be scored as a wrong answer nor as a right one.
    """

    CERTIFIED = "certified"
    REFUTED = "refuted"
    INVALID = "invalid"


class ErrorKind(StrEnum):
    """Why a verification is ``INVALID``."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    OUTAGE = "outage"
    RATE_LIMITED = "rate_limited"
    BREAKER_OPEN = "breaker_open"
    MALFORMED = "malformed"
    CANCELLED = "cancelled"

    @property
    def transient(self) -> bool:
        """Whether retrying the same call may succeed."""
        return self in _TRANSIENT


_TRANSIENT = frozenset({ErrorKind.TIMEOUT, ErrorKind.OUTAGE, ErrorKind.RATE_LIMITED})


@dataclass(frozen=True, slots=True)
class RejectedFact:
    """A fact the verifier refused to use, with the reasons."""

    field: str
    value: Any
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "value": self.value, "reasons": list(self.reasons)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RejectedFact:
        return cls(field=str(data["field"]), value=data.get("value"), reasons=tuple(data.get("reasons", ())))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result of verifying one claim.

    ``decision`` is the decision the verifier certified (``None`` for pass/fail verifiers).
    ``evidence`` holds JSON-native data only (dict, list, str, int, float, bool, None): a proof, a log,
    a trace. ``components`` are per-component scores in [0, 1] that a shaper may use (e.g. ``graded``).
    ``timings`` are durations in seconds. ``error_kind`` is set exactly when the outcome is ``INVALID``.
    """

    outcome: Outcome
    decision: str | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    components: Mapping[str, float] = field(default_factory=dict)
    rejected_facts: tuple[RejectedFact, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    error_kind: ErrorKind | None = None
    reason: str = ""
    verifier: str = ""

    def __post_init__(self) -> None:
        if type(self.outcome) is not Outcome:  # a member already is its own Outcome(): skip the enum lookup
            object.__setattr__(self, "outcome", Outcome(self.outcome))
        if self.error_kind is not None:
            object.__setattr__(self, "error_kind", ErrorKind(self.error_kind))
        if (self.outcome is Outcome.INVALID) != (self.error_kind is not None):
            raise ValueError("Verdict.error_kind must be set exactly when the outcome is 'invalid'")
        for name, value in self.components.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"Verdict.components[{name!r}] must be a finite number, got {value!r}")

    def stamped(self, verifier: str, **timings: float) -> Verdict:
        """A copy with ``timings`` added and ``verifier`` set where it was empty.

        The runtime stamps every verdict; copying the already-validated fields directly is several
        times cheaper than ``dataclasses.replace``, which re-runs the checks.
        """
        copy = object.__new__(Verdict)
        for name in Verdict.__slots__:
            object.__setattr__(copy, name, getattr(self, name))
        object.__setattr__(copy, "timings", {**self.timings, **timings})
        object.__setattr__(copy, "verifier", self.verifier or verifier)
        return copy

    @property
    def certified(self) -> bool:
        return self.outcome is Outcome.CERTIFIED

    @property
    def invalid(self) -> bool:
        return self.outcome is Outcome.INVALID

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "decision": self.decision,
            "evidence": dict(self.evidence),
            "components": dict(self.components),
            "rejected_facts": [r.to_dict() for r in self.rejected_facts],
            "timings": dict(self.timings),
            "error_kind": None if self.error_kind is None else self.error_kind.value,
            "reason": self.reason,
            "verifier": self.verifier,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(
            outcome=Outcome(data["outcome"]),
            decision=data.get("decision"),
            evidence=dict(data.get("evidence") or {}),
            components={k: float(v) for k, v in (data.get("components") or {}).items()},
            rejected_facts=tuple(RejectedFact.from_dict(r) for r in data.get("rejected_facts") or ()),
            timings={k: float(v) for k, v in (data.get("timings") or {}).items()},
            error_kind=None if data.get("error_kind") is None else ErrorKind(data["error_kind"]),
            reason=str(data.get("reason") or ""),
            verifier=str(data.get("verifier") or ""),
        )

    def to_json(self) -> str:
        """Serialise to JSON; raises ``ValueError`` when the evidence is not JSON-native."""
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Verdict:
        return cls.from_dict(json.loads(text))


def invalid(error_kind: ErrorKind, reason: str, *, verifier: str = "", **timings: float) -> Verdict:
    """Build an ``INVALID`` verdict (the verifier could not decide)."""
    return Verdict(Outcome.INVALID, error_kind=error_kind, reason=reason, verifier=verifier, timings=timings)
