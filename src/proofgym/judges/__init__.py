"""Rubrics and judges: event- and outcome-level scoring of trajectories, programmatic and LLM, blended into rewards.

A :class:`RubricSet` holds an event rubric (each decision), an outcome rubric (the whole trajectory) and the blend
weights. Criteria that name a registered function are computed (:class:`ProgrammaticJudge`); the others are asked of
an LLM judge. Invalid verdicts abstain: never 0, never paid.
"""

from proofgym.judges._programmatic import (
    CRITERIA,
    CriterionContext,
    CriterionFunction,
    ProgrammaticJudge,
    register_criterion,
)
from proofgym.judges._registry import RUBRIC_SETS, resolve_rubric_set
from proofgym.judges._rubric import (
    AGGREGATIONS,
    LEVELS,
    Criterion,
    Rubric,
    RubricSet,
    RubricWeights,
    Scale,
    load_rubric_set,
    rubric_set_from_data,
)
from proofgym.judges._score import (
    BLENDED_KIND,
    JUDGE_SOURCE,
    BlendedReward,
    LevelScore,
    RubricScorer,
    TrajectoryScore,
    blend,
    env_return,
)
from proofgym.judges._types import CriterionVerdict, Judge, JudgeItem, JudgeVerdict, Level
from proofgym.judges._view import clip, render_decision, render_step, render_trajectory

__all__ = [
    "AGGREGATIONS", "BLENDED_KIND", "RUBRIC_SETS", "resolve_rubric_set", "JUDGE_SOURCE", "BlendedReward", "LevelScore", "RubricScorer", "TrajectoryScore",
    "blend", "env_return", "CRITERIA", "LEVELS", "Criterion", "CriterionContext", "CriterionFunction", "CriterionVerdict",
    "Judge", "JudgeItem", "JudgeVerdict", "Level", "ProgrammaticJudge", "Rubric", "RubricSet", "RubricWeights",
    "Scale", "clip", "load_rubric_set", "register_criterion", "render_decision", "render_step", "render_trajectory",
    "rubric_set_from_data",
]
