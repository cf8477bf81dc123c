"""Crafter's rewards per decision (one tool call, up to 8 actions): achievements as event rewards, the reference's
dense ``decision_stepwise`` rewards, and an outcome reward at the end of the episode.

- ``achievements`` (every decision): with ``event_rewards_kind = "unique"`` the number of achievements unlocked
  for the first time in the episode by this decision; with ``"ach_delta"`` the increase of all achievement counts
  (a second wood collected counts again).
- ``decision`` (when ``step_rewards.enabled``), times ``indicator_lambda``: strategy ``consistent`` pays 1 when the
  decision unlocked anything new; ``per_achievement`` pays ``weights[a]`` for each unlock of ``a`` (repeats
  included), each achievement credited at most ``k_limits[a]`` times per episode, plus ``inventory_weights[i]`` the
  first time in the episode item ``i`` is held. Nothing here can be farmed: every term is bounded per episode.
- ``outcome`` (the last decision): ``outcome_weight`` times progress, unique achievements / 22.
"""

from __future__ import annotations

from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from proofgym.crafter._world import ACHIEVEMENTS

#: Inventory shaping of ``per_achievement``: paid the first time in an episode the item is held.
DEFAULT_INVENTORY_WEIGHTS: dict[str, float] = {
    "wood": 0.10, "sapling": 0.05, "stone": 0.20, "coal": 0.25, "iron": 0.40, "diamond": 0.75,
    "wood_pickaxe": 0.30, "wood_sword": 0.20, "stone_pickaxe": 0.45, "stone_sword": 0.30,
    "iron_pickaxe": 0.75, "iron_sword": 0.50,
}


def _known(names: Mapping[str, object], allowed: tuple[str, ...] | dict[str, float], what: str) -> None:
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(map(repr, unknown))}; expected some of {', '.join(allowed)}")


class StepRewardConfig(BaseModel):
    """``step_rewards``: the reference's keys (``enabled, mode, strategy, indicator_lambda, weights, k_limits``)
    and ``inventory_weights`` (the ``per_achievement`` inventory shaping; defaults
    :data:`DEFAULT_INVENTORY_WEIGHTS`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = False
    mode: Literal["decision_stepwise"] = "decision_stepwise"
    strategy: Literal["consistent", "per_achievement"] = "consistent"
    indicator_lambda: float = Field(1.0, ge=0, le=100, allow_inf_nan=False)
    weights: dict[str, float] = Field(default_factory=dict, description="per achievement; 1.0 when absent")
    k_limits: dict[str, int] = Field(default_factory=dict, description="per achievement; 1 when absent")
    inventory_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_INVENTORY_WEIGHTS))

    @field_validator("weights", "k_limits")
    @classmethod
    def _achievements(cls, value: dict[str, float]) -> dict[str, float]:
        _known(value, ACHIEVEMENTS, "achievement")
        if any(not (0 <= amount <= 100) for amount in value.values()):
            raise ValueError("every weight and k_limit must be between 0 and 100")
        return value

    @field_validator("inventory_weights")
    @classmethod
    def _items(cls, value: dict[str, float]) -> dict[str, float]:
        _known(value, DEFAULT_INVENTORY_WEIGHTS, "inventory item")
        if any(not (0 <= amount <= 100) for amount in value.values()):
            raise ValueError("every inventory weight must be between 0 and 100")
        return value


class EpisodeRewards:
    """One episode's reward bookkeeping: what was unlocked, credited and held so far."""

    def __init__(self, kind: str, step_rewards: StepRewardConfig, outcome_weight: float) -> None:
        self.kind, self.config, self.outcome_weight = kind, step_rewards, outcome_weight
        self.unlocked: set[str] = set()
        self._credited: dict[str, int] = {}
        self._held: set[str] = set()

    def decision(self, before: Mapping[str, int], after: Mapping[str, int],
                 inventory: Mapping[str, int]) -> tuple[dict[str, float], list[str]]:
        """The components of a decision that took the achievement counts from ``before`` to ``after``, leaving
        ``inventory``; and the achievements it unlocked for the first time."""
        gains = {} if after == before else \
            {name: after[name] - before[name] for name in ACHIEVEMENTS if after[name] > before[name]}
        new = sorted(name for name in gains if name not in self.unlocked)
        self.unlocked.update(new)
        event = float(len(new)) if self.kind == "unique" else float(sum(gains.values()))
        components = {"achievements": event}
        if self.config.enabled:
            components["decision"] = self.config.indicator_lambda * self._stepwise(gains, new, inventory)
        return components, new

    def _stepwise(self, gains: Mapping[str, int], new: list[str], inventory: Mapping[str, int]) -> float:
        config = self.config
        if config.strategy == "consistent":
            return 1.0 if new else 0.0
        total = 0.0
        for name, count in gains.items():
            room = config.k_limits.get(name, 1) - self._credited.get(name, 0)
            credited = max(0, min(count, room))
            self._credited[name] = self._credited.get(name, 0) + credited
            total += credited * config.weights.get(name, 1.0)
        for item, weight in config.inventory_weights.items():
            if inventory.get(item, 0) > 0 and item not in self._held:
                self._held.add(item)
                total += weight
        return total

    def outcome(self) -> dict[str, float]:
        """The outcome component of the last decision: ``outcome_weight`` x unique achievements / 22."""
        return {"outcome": self.outcome_weight * len(self.unlocked) / len(ACHIEVEMENTS)}
