"""Reward shaping: turn a verdict on a parsed completion into a bounded, explained reward."""

from proofgym.rewards._config import ShaperConfig, ShaperPenalties, ShaperWeights
from proofgym.rewards._function import (
    ErrorBudget,
    ErrorBudgetExceeded,
    RewardFunction,
    RewardStats,
    ScoredItem,
)
from proofgym.rewards._labels import label_text
from proofgym.rewards._metrics import COMPONENTS, batch_metrics, item_breakdown, last_runtime_metrics
from proofgym.rewards._reference import Reference
from proofgym.rewards._shaper import DefaultRewardShaper, InvalidVerdictError, ShapedReward, rule_mention_credit

__all__ = [
    "COMPONENTS",
    "DefaultRewardShaper",
    "ErrorBudget",
    "ErrorBudgetExceeded",
    "RewardFunction",
    "RewardStats",
    "ScoredItem",
    "InvalidVerdictError",
    "Reference",
    "ShapedReward",
    "ShaperConfig",
    "ShaperPenalties",
    "ShaperWeights",
    "batch_metrics",
    "item_breakdown",
    "label_text",
    "last_runtime_metrics",
    "rule_mention_credit",
]
