"""What a rollout returns: its session trace, the conversation, and the figures read from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from proofgym.traces import SessionTrace


@dataclass(frozen=True)
class RolloutResult:
    """One rollout: ``session`` holds every step (observation, action, reward, info, LM calls,
    environment event, verification, event rewards) and the outcome reward; ``messages`` is the
    chat history as the policy last saw it, plus the final observation."""

    session: SessionTrace
    messages: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def total_return(self) -> float:
        """The sum of the step rewards."""
        return float(sum(step.reward for step in self.session.steps))

    @property
    def outcome_score(self) -> float | None:
        """1.0 when the episode ended solved (per the environment's info), 0.0 when it ended
        unsolved, ``None`` when there is no outcome (an abstained or invalid verification, or a
        rollout that ended in error, timeout or cancellation)."""
        reward = self.session.outcome_reward
        return None if reward is None else reward.score

    @property
    def invalid_reason(self) -> str | None:
        """Why the episode was not judged, or ``None`` when it was (see :func:`invalid_reason`)."""
        return invalid_reason(self.session)

    @property
    def verdict(self) -> Mapping[str, Any] | None:
        """The last verdict of the episode (``Verdict.to_dict()``), or ``None`` when nothing was verified."""
        for step in reversed(self.session.steps):
            if step.verification is not None:
                return step.verification.verdict
        return None

    @property
    def status(self) -> str:
        """``ok``, ``error``, ``timeout`` or ``cancelled``."""
        return self.session.status

    @property
    def error(self) -> str | None:
        return self.session.error

    @property
    def length(self) -> int:
        """The number of steps."""
        return len(self.session.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session.to_dict(), "messages": [dict(m) for m in self.messages]}


def invalid_reason(session: SessionTrace) -> str | None:
    """Why the environment could not judge the episode (its toolchain missing, its sandbox or verifier
    unavailable), or ``None`` when it judged it or the rollout did not end ``ok``.

    The environment says so on the terminal step: ``info["outcome"] == "invalid"``, the reason being the
    verdict's (``info["verdict"]["reason"]``), else ``info["reason"]``. Such an episode has no outcome score.
    """
    if session.status != "ok" or not session.steps:
        return None
    last = session.steps[-1]
    if not last.done or last.truncated or last.info.get("outcome") != "invalid":
        return None
    verdict = last.info.get("verdict")
    for reason in (verdict.get("reason") if isinstance(verdict, Mapping) else None, last.info.get("reason")):
        if isinstance(reason, str) and reason.strip():
            return reason.strip()
    return "the environment could not judge the episode"
