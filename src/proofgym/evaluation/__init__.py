"""Evaluation: roll a policy out on a list of seeds, here or on a task app, and summarise the results.

``proofgym eval --config configs/eval/grant.toml`` is the command line of :func:`run_eval`.
"""

from proofgym.evaluation._config import (
    ComputeSection,
    EvalConfig,
    EvaluationSection,
    PolicyConfigSection,
    load_eval_config,
    parse_eval_config,
    parse_seeds,
)
from proofgym.evaluation._errors import EvalError
from proofgym.evaluation._judges import EvalJudge, EvaluationJudgeSection, build_judges
from proofgym.evaluation._ray_rollouts import RayRollouts, RayTaskApps, remove_orphaned_actor_dirs
from proofgym.evaluation._report import EvalReport, SeedResult
from proofgym.evaluation._runner import evaluate, run_eval

__all__ = [
    "ComputeSection",
    "EvalConfig",
    "EvalError",
    "EvalJudge",
    "EvalReport",
    "EvaluationJudgeSection",
    "EvaluationSection",
    "PolicyConfigSection",
    "RayRollouts",
    "RayTaskApps",
    "SeedResult",
    "build_judges",
    "evaluate",
    "load_eval_config",
    "parse_eval_config",
    "parse_seeds",
    "remove_orphaned_actor_dirs",
    "run_eval",
]
