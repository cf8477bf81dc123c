"""What an evaluation produced: one result per seed, and the summary over them (each judge's too)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r of two equally long sequences; ``None`` with fewer than 2 pairs or when either has no
    variance (r is undefined then, not 0)."""
    if len(xs) != len(ys):
        raise ValueError(f"pearson needs sequences of one length, got {len(xs)} and {len(ys)}")
    n = len(xs)
    if n < 2:
        return None
    mean_x, mean_y = math.fsum(xs) / n, math.fsum(ys) / n
    dx = [x - mean_x for x in xs]
    dy = [y - mean_y for y in ys]
    sxx, syy = math.fsum(d * d for d in dx), math.fsum(d * d for d in dy)
    if sxx <= 0.0 or syy <= 0.0:
        return None
    r = math.fsum(a * b for a, b in zip(dx, dy)) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def achievements_of(info: Any) -> dict[str, int] | None:
    """An environment's achievement counts from a last step's ``info``: ``info["achievements"]``, a mapping of
    every achievement the environment has to how often the episode unlocked it (0 for none), or ``None`` when the
    environment reports no achievements (or not in that shape)."""
    found = info.get("achievements") if isinstance(info, dict) else None
    if not isinstance(found, dict) or not found or len(found) > 1000:
        return None
    counts = {str(name): count for name, count in found.items()}
    if not all(isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in counts.values()):
        return None
    return counts


def achievement_summary(results: Sequence[SeedResult]) -> dict[str, Any] | None:
    """Over the judged rollouts that ended ``ok`` and report achievements: each achievement's success rate in %
    (the share of episodes that unlocked it), the score (Crafter's: ``exp(mean(ln(1 + p))) - 1`` over the success
    rates ``p`` in %, a geometric mean that rewards breadth) and progress (the mean share of the achievements an
    episode unlocked). ``None`` when no rollout reports achievements."""
    counted = [r.achievements for r in results if r.ok and not r.invalid and r.achievements is not None]
    if not counted:
        return None
    names = sorted(set().union(*counted))
    rates = {name: 100.0 * sum(counts.get(name, 0) > 0 for counts in counted) / len(counted) for name in names}
    score = math.exp(math.fsum(math.log1p(rate) for rate in rates.values()) / len(rates)) - 1.0
    progress = math.fsum(sum(counts.get(name, 0) > 0 for name in names) / len(names) for counts in counted)
    return {"episodes": len(counted), "achievements": len(names), "success_rates": rates, "score": score,
            "progress": progress / len(counted)}


@dataclass(frozen=True)
class SeedResult:
    """One rollout of an evaluation.

    ``status`` is the session's (``ok``, ``error``, ``timeout``, ``cancelled``), or ``failed`` when
    no session came back (the task app refused the request or could not be reached); ``error``
    then says why. ``passed`` means the rollout ended with the environment's top outcome.
    ``invalid_reason`` is set when the rollout ran but the environment could not judge it (its
    toolchain missing, its verifier unavailable): it is ``invalid``, neither passed nor failed.
    ``achievements`` is the count of each achievement the episode unlocked, when the environment reports them
    (see :func:`achievements_of`).
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
    judge_scores: dict[str, float | None] = field(default_factory=dict)
    achievements: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def invalid(self) -> bool:
        return self.ok and self.invalid_reason is not None

    @property
    def passed(self) -> bool:
        return self.ok and self.outcome_score is not None and self.outcome_score >= 1.0

    @property
    def official_score(self) -> float | None:
        """The environment's score of a judged rollout: its outcome score, else its return (``None`` when the
        rollout did not end ``ok`` or the environment could not judge it)."""
        if not self.ok or self.invalid:
            return None
        return self.outcome_score if self.outcome_score is not None else self.total_return

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "passed": self.passed, "invalid": self.invalid}


@dataclass(frozen=True)
class JudgeStats:
    """How one judge of an eval went: what its score per trajectory is (``score_kind``: ``blended``, ``outcome``
    or ``event``), how many trajectories it ``scored``, how many ``abstained`` (an invalid verdict left no score),
    how many rollouts had ``no_trace`` to judge, the ``invalid_verdicts`` among its verdicts, and the ``problem``
    that kept it from running at all (its code could not be loaded). The scores are each result's
    ``judge_scores[name]``."""

    name: str
    score_kind: str
    scored: int = 0
    abstained: int = 0
    no_trace: int = 0
    invalid_verdicts: int = 0
    problem: str | None = None

    def summary(self, results: Sequence[SeedResult]) -> dict[str, Any]:
        """The stats with the mean score and Pearson's r against the official score over the seeds."""
        scores = [r.judge_scores.get(self.name) for r in results]
        valid = [s for s in scores if s is not None]
        pairs = [(r.official_score, s) for r, s in zip(results, scores) if s is not None
                 and r.official_score is not None]
        return {**asdict(self), "mean": math.fsum(valid) / len(valid) if valid else None,
                "pearson_r": pearson([p[0] for p in pairs], [p[1] for p in pairs]), "pairs": len(pairs)}


@dataclass
class EvalReport:
    """An evaluation: where it ran, every seed's result and the summary (``summary()``).

    ``failed`` counts the rollouts that did not end ``ok``; of those that did, ``passed`` the ones with
    the environment's top outcome and ``invalid`` the ones it could not judge (``invalid_reasons``
    counts each reason). ``judges`` says how each judge went (``summary()["judges"]``: its mean score and its
    Pearson r against the official score). Means are over the judged rollouts that ended ``ok`` (the outcome mean over
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
    judges: list[JudgeStats] = field(default_factory=list)
    ray_address: str | None = None  # the Ray cluster the rollouts ran on

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
            "judges": [judge.summary(self.results) for judge in self.judges],
            "achievements": achievement_summary(self.results),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "app_id": self.app_id,
            "env_name": self.env_name,
            "policy_name": self.policy_name,
            "model": self.model,
            "mode": "remote" if self.task_app_url else "ray" if self.ray_address else "in-process",
            "ray_address": self.ray_address,
            "task_app_url": self.task_app_url,
            "traces": self.traces,
            "summary": self.summary(),
            "results": [result.to_dict() for result in self.results],
        }
