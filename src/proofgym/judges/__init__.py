"""Rubrics and judges: event- and outcome-level scoring of trajectories, programmatic and LLM, blended into rewards.

A :class:`RubricSet` holds an event rubric (each decision), an outcome rubric (the whole trajectory) and the blend
weights. Criteria with a function are computed (:class:`ProgrammaticJudge`): a rubric built in Python passes the
function itself, a rubric file names it as registered (:func:`register_criterion`, or a plugin's entry point in
``proofgym.criteria``); the others are asked of an LLM judge. Invalid verdicts abstain: never 0, never paid.
"""

from proofgym.judges._build import JudgingConfig, build_judge, build_scorer
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
    criterion_name,
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
from proofgym.judges._limiter import EndpointLimits, LimiterRegistry, RateLimiter, limiter_for
from proofgym.judges._llm import LLMJudge, default_runtime_config
from proofgym.judges._parse import (
    ParsedGroupVerdicts,
    ParsedVerdicts,
    ParseProblem,
    parse_group_verdicts,
    parse_verdicts,
)
from proofgym.judges._prompt import (
    PROMPT_VERSION,
    build_group_messages,
    build_messages,
    escape_candidate,
    verdict_schema,
)
from proofgym.judges._relative import RelativeJudge
from proofgym.judges._panel import PANEL_AGGREGATES, Panel

__all__ = [
    "AGGREGATIONS", "BLENDED_KIND", "CRITERIA", "JUDGE_SOURCE", "LEVELS", "PANEL_AGGREGATES", "PROMPT_VERSION",
    "RUBRIC_SETS", "blend", "BlendedReward", "build_group_messages", "build_judge", "build_messages", "build_scorer",
    "clip", "Criterion", "CriterionContext", "criterion_name", "CriterionFunction", "CriterionVerdict",
    "default_runtime_config", "EndpointLimits", "env_return", "escape_candidate", "Judge", "JudgeItem",
    "JudgeVerdict", "JudgingConfig", "Level", "LevelScore", "limiter_for", "LimiterRegistry", "LLMJudge",
    "load_rubric_set", "Panel", "parse_group_verdicts", "parse_verdicts", "ParsedGroupVerdicts", "ParsedVerdicts",
    "ParseProblem", "ProgrammaticJudge", "RateLimiter", "register_criterion", "RelativeJudge", "render_decision",
    "render_step", "render_trajectory", "resolve_rubric_set", "Rubric", "rubric_set_from_data", "RubricScorer",
    "RubricSet", "RubricWeights", "Scale", "TrajectoryScore", "verdict_schema",
]
