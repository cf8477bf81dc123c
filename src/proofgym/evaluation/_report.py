"""What an evaluation produced: one result per seed, and the summary over them."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class SeedResult:
    """One rollout of an evaluation.

    ``status`` is the session's (``ok``, ``error``, ``timeout``, ``cancelled``), or ``failed`` when
    no session came back (the task app refused the request or could not be reached); ``error``
    then says why. ``passed`` means the rollout ended with the environment's top outcome.
    ``invalid_reason`` is set when the rollout ran but the environment could not judge it (its
    toolchain missing, its verifier unavailable): it is ``invalid``, neither passed nor failed.
    """

    seed: int
    status: str
    total_return: float | None = None
    outcome_score: float | None = None
    num_steps: int = 0
    tokens: int | None = None
    duration_s: float = 0.0
    session_id: str | None = None
    task_id: str | None = None
    error: str | None = None
    invalid_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def invalid(self) -> bool:
        return self.ok and self.invalid_reason is not None

    @property
    def passed(self) -> bool:
        return self.ok and self.outcome_score is not None and self.outcome_score >= 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "passed": self.passed, "invalid": self.invalid}


@dataclass
class EvalReport:
    """An evaluation: where it ran, every seed's result and the summary (``summary()``).

    ``failed`` counts the rollouts that did not end ``ok``; of those that did, ``passed`` the ones with
    the environment's top outcome and ``invalid`` the ones it could not judge (``invalid_reasons``
    counts each reason). Means are over the judged rollouts that ended ``ok`` (the outcome mean over
    those with an outcome); the pass rate is over every judged rollout, failed ones counting as not
    passed (``None`` when nothing was judged).
    """

    run_id: str
    env_name: str
    policy_name: str
    model: str | None
    task_app_url: str | None
    traces: str | None
    results: list[SeedResult] = field(default_factory=list)
    wall_time_s: float = 0.0
    app_id: str | None = None

    @property
    def ok(self) -> int:
        return sum(result.ok for result in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.ok

    @property
    def invalid(self) -> int:
        return sum(result.invalid for result in self.results)

    @property
    def nothing_judged(self) -> bool:
        """Whether there were rollouts and the environment could judge none of them."""
        return bool(self.results) and self.invalid == len(self.results)

    def invalid_reasons(self) -> dict[str, int]:
        """How many rollouts each reason left unjudged, most frequent first."""
        counts = Counter(r.invalid_reason for r in self.results if r.invalid)
        return {str(reason): count for reason, count in counts.most_common()}

    def summary(self) -> dict[str, Any]:
        """Counts, means, pass rate, tokens and wall time, JSON-native."""
        judged = [result for result in self.results if not result.invalid]
        ok = [result for result in judged if result.ok]
        returns = [r.total_return for r in ok if r.total_return is not None]
        outcomes = [r.outcome_score for r in ok if r.outcome_score is not None]
        tokens = [r.tokens for r in self.results if r.tokens is not None]
        return {
            "rollouts": len(self.results),
            "ok": self.ok,
            "failed": self.failed,
            "passed": sum(r.passed for r in self.results),
            "invalid": self.invalid,
            "invalid_reasons": self.invalid_reasons(),
            "mean_return": sum(returns) / len(returns) if returns else None,
            "mean_outcome": sum(outcomes) / len(outcomes) if outcomes else None,
            "pass_rate": sum(r.passed for r in judged) / len(judged) if judged else None,
            "tokens": sum(tokens) if tokens else None,
            "wall_time_s": self.wall_time_s,
            "rollouts_per_s": len(self.results) / self.wall_time_s if self.wall_time_s > 0 else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "app_id": self.app_id,
            "env_name": self.env_name,
            "policy_name": self.policy_name,
            "model": self.model,
            "mode": "remote" if self.task_app_url else "in-process",
            "task_app_url": self.task_app_url,
            "traces": self.traces,
            "summary": self.summary(),
            "results": [result.to_dict() for result in self.results],
        }
