"""Held-out evaluations of an RL run: the success share, its split by gold decision, and the stop rule's streak.

A rulebook environment (``fact_finding``, the rulebook envs) names the gold decision in its answer step's
``info["gold"]``; an episode the policy never answered names none, and its gold is read from the environment's own
oracle episode for that seed (:class:`OracleGold`). The split shows what one share hides: 95 % overall can be 98 %
of grants and 90 % of denials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from proofgym.training.rl._task_app import Rollout
from proofgym.traces import SessionTrace

#: The split's bucket for a rollout whose gold decision is not known (no answer and no oracle to ask).
UNKNOWN_DECISION = "unknown"


@dataclass
class Evaluation:
    """One held-out evaluation: the success ``share`` over its valid rollouts and, where the traces name gold
    decisions, ``by_decision``: per gold decision, its success share and how many valid rollouts had it."""

    when: str
    seeds: list[int]
    share: float
    valid: int
    invalid: int
    by_decision: dict[str, tuple[float, int]] = field(default_factory=dict)

    def line(self) -> str:
        """The note the run prints for it."""
        text = (f"held-out success {self.when}: {self.share:.1%} of {self.valid} valid rollouts "
                f"({self.invalid} invalid), seeds {self.seeds[0]}..{self.seeds[-1]}")
        if self.by_decision:
            text += "; by gold decision: " + ", ".join(f"{decision} {share:.1%} of {n}" for decision, (share, n)
                                                        in self.by_decision.items())
        return text

    def columns(self, name: str) -> dict[str, float]:
        """Metrics columns: ``name`` (the share) and ``name_DECISION`` per gold decision."""
        return {name: self.share, **{f"{name}_{decision}": share for decision, (share, _) in self.by_decision.items()}}

    def to_dict(self) -> dict[str, Any]:
        """For the run's summary (JSON)."""
        return {"when": self.when, "seeds": f"{self.seeds[0]}..{self.seeds[-1]}", "n_seeds": len(self.seeds),
                "success": _finite_or_none(self.share), "valid": self.valid, "invalid": self.invalid,
                "by_decision": {decision: {"success": _finite_or_none(share), "rollouts": n}
                                for decision, (share, n) in self.by_decision.items()}}


def read_evaluation(when: str, seeds: Sequence[int], rollouts: Sequence[Rollout],
                    gold: Callable[[int], str | None]) -> Evaluation:
    """The :class:`Evaluation` of ``rollouts``: each valid one's success (:func:`success`) and, when any trace
    names a gold decision, the split by it (``gold(seed)`` for the traces that name none)."""
    valid = [rollout for rollout in rollouts if rollout.valid]
    scores = [success(rollout.trace) for rollout in valid]  # type: ignore[arg-type]
    evaluation = Evaluation(when, list(seeds), _mean(scores) if valid else math.nan, len(valid),
                            len(rollouts) - len(valid))
    named = [gold_decision(rollout.trace) for rollout in valid]  # type: ignore[arg-type]
    if any(decision is not None for decision in named):
        groups: dict[str, list[float]] = {}
        for rollout, decision, score in zip(valid, named, scores):
            decision = decision or gold(rollout.seed) or UNKNOWN_DECISION
            groups.setdefault(decision, []).append(score)
        evaluation.by_decision = {decision: (_mean(groups[decision]), len(groups[decision]))
                                  for decision in sorted(groups)}
    return evaluation


def success(trace: SessionTrace) -> float:
    """A rollout's success: the environment's outcome score (as the judge recorded it, or as the environment
    gave it); without one, whether any step paid a reward."""
    outcome = trace.outcome_reward
    environment = outcome.annotation.get("environment") if outcome is not None and outcome.source == "judge" and \
        isinstance(outcome.annotation, dict) else None
    score = (environment or {}).get("score") if environment else (outcome.score if outcome is not None else None)
    if score is not None:
        return float(score)
    return float(sum(step.reward for step in trace.steps) > 0)


def gold_decision(trace: SessionTrace) -> str | None:
    """The gold decision the trace names: its last ``info["gold"]`` (a rulebook environment's answer step)."""
    for step in reversed(trace.steps):
        gold = step.info.get("gold") if isinstance(step.info, Mapping) else None
        if isinstance(gold, str) and gold:
            return gold
    return None


class OracleGold:
    """``gold(seed)``: the gold decision of ``seed`` from the environment's oracle episode (its ``oracle_actions``
    played on a local copy of the environment), read once per seed; ``None`` for an environment without an
    oracle or whose oracle episode names no gold."""

    def __init__(self, env_name: str, options: Mapping[str, Any]) -> None:
        self.env_name, self.options = env_name, dict(options)
        self._env: Any = None
        self._known: dict[int, str | None] = {}

    def __call__(self, seed: int) -> str | None:
        if seed not in self._known:
            self._known[seed] = self._play(seed)
        return self._known[seed]

    def _play(self, seed: int) -> str | None:
        from proofgym.envs import env_hook, make

        if self._env is None:
            self._env = make(self.env_name, **self.options)
        oracle = env_hook(self._env, "oracle_actions")
        if oracle is None:
            return None
        gold = None
        for action in oracle(seed):  # resets the episode
            step = self._env.step(action)
            found = step.info.get("gold") if isinstance(step.info, Mapping) else None
            gold = found if isinstance(found, str) and found else gold
            if step.done:
                break
        return gold

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def goal_streak(rows: Sequence[Mapping[str, Any]], stop_at: float, column: str = "eval_success") -> int:
    """How many held-out evaluations in a row, the last one included, read ``stop_at`` or more (a share that is not
    a number never does)."""
    streak = 0
    for row in reversed(rows):
        if column not in row:
            continue
        value = row[column]
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= stop_at):
            break
        streak += 1
    return streak


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None
