"""Shaper configuration, validated so that no accepted config can break the shaper's invariants."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Strict: a config is data someone wrote down; "0.5" or true is a mistake to report, not to coerce.
_MODEL_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

# How much smaller than the lowest tier weight the graded weight must be, relative to the total
# weight. Rewards are sums of floats; a gap below a few ulps could round into a tie.
_TIE_MARGIN = 1e-9


class ShaperWeights(BaseModel):
    """Weight of each component; each component lies in [0, 1], so a weight is its maximum credit."""

    model_config = _MODEL_CONFIG

    format: float = Field(0.1, ge=0, description="credit for a completion that parsed")
    certified: float = Field(0.5, ge=0, description="credit when the verifier certified the claim's decision")
    correct: float = Field(1.0, ge=0, description="credit when the decision matches the gold answer")
    grounded: float = Field(0.3, ge=0, description="credit when no asserted fact is rejected")
    graded: float = Field(0.2, ge=0, description="weight of the verifier's graded component")


class ShaperPenalties(BaseModel):
    """Penalty weights, subtracted from the reward."""

    model_config = _MODEL_CONFIG

    rejected: float = Field(0.3, ge=0, description="penalty at a rejected-fact fraction of 1")


class ShaperConfig(BaseModel):
    """Configuration of :class:`~proofgym.rewards.DefaultRewardShaper`.

    ``floor`` is the reward of a format failure (and of an invalid verdict under
    ``on_invalid="floor"``). ``on_invalid`` says what an invalid verdict (the verifier could not
    decide) gets: ``"abstain"`` (no reward, the sample carries no signal), ``"floor"`` or ``"raise"``.
    ``graded_component`` names the verdict component used as graded credit; with
    ``graded_from="rule_mentions"`` graded credit instead rewards reasoning that names the rules that
    fired (from the evidence's ``symbolic_trace``) and is docked for naming rules that did not.

    Validation rejects configs that would let a certified, grounded, correct completion be outscored
    or tied, or let a parsed completion score below a format failure.
    """

    model_config = _MODEL_CONFIG

    weights: ShaperWeights = Field(default_factory=ShaperWeights)
    penalties: ShaperPenalties = Field(default_factory=ShaperPenalties)
    floor: float = -1.0
    on_invalid: Literal["abstain", "floor", "raise"] = "abstain"
    graded_component: str = Field("graded", min_length=1)
    graded_from: Literal["verifier", "rule_mentions"] = Field(
        "verifier",
        description="'verifier': the verdict's graded component; 'rule_mentions': the share of the rules that "
        "fired which the reasoning names, less the rules it names that did not fire",
    )

    @model_validator(mode="after")
    def _keep_invariants(self) -> ShaperConfig:
        w = self.weights
        # Summed in the order the shaper sums them, so a finite total here is a finite ceiling there.
        ceiling = sum((w.format, w.certified, w.correct, w.grounded, w.graded))
        if not math.isfinite(ceiling):
            raise ValueError(f"the weights must sum to a finite number, got {ceiling}")
        # A completion that misses one tier (certified, correct, grounded) loses at least the smallest
        # tier weight and gains at most weights.graded, so it stays below the full tier only when
        # weights.graded is the smaller of the two.
        tier_min = min(w.certified, w.correct, w.grounded)
        if w.graded >= tier_min - _TIE_MARGIN * ceiling:
            by = f" by more than {_TIE_MARGIN:g} x the total weight" if w.graded < tier_min else ""
            raise ValueError(
                f"weights.graded ({w.graded}) must be smaller than each of weights.certified, weights.correct "
                f"and weights.grounded (min {tier_min}){by} so that a certified, grounded, correct completion "
                "always outscores the rest"
            )
        worst_penalty = -self.penalties.rejected
        if self.floor > worst_penalty:
            raise ValueError(
                f"floor ({self.floor}) must not exceed -penalties.rejected ({worst_penalty}): a parsed completion "
                "loses at most that much, and a format failure must never outscore a parsed completion"
            )
        return self
