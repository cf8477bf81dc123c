"""Crafter: the seed's second environment (text view, tools, achievement rewards, difficulty, rubrics).

:class:`CrafterEnv` (``make("crafter", ...)``, registered through the ``proofgym.envs`` entry point) plays a Crafter
world through a BALROG-style text view with the reference's ``interact_many`` tool and a single-action
``interact``. Needs the ``crafter`` package: ``pip install 'proofgym[crafter]'`` (imported on the first world built).
:class:`RandomAgent` and :class:`HeuristicAgent` are baselines that act on the text view alone.
"""

from proofgym.crafter._agents import HeuristicAgent, RandomAgent, read_view
from proofgym.crafter._difficulty import TraitCache, difficulty_of
from proofgym.crafter._env import (
    MAX_ACTIONS_PER_CALL,
    CrafterEnv,
    CrafterEnvConfig,
    CrafterEnvParams,
    FrameConfig,
    make_crafter_env,
    tool_schemas,
)
from proofgym.crafter._frames import session_frames, write_frames
from proofgym.crafter._rewards import DEFAULT_INVENTORY_WEIGHTS, EpisodeRewards, StepRewardConfig
from proofgym.crafter._rubrics import CRAFTER_RUBRICS, TIERS, achievement_depth, goal_completion, unique_achievements
from proofgym.crafter._world import ACHIEVEMENTS, ACTIONS, CRAFTER_INSTALL_HINT, CrafterUnavailable, CrafterWorld

__all__ = [
    "ACHIEVEMENTS",
    "ACTIONS",
    "CRAFTER_RUBRICS",
    "CrafterEnv",
    "CrafterEnvConfig",
    "CrafterEnvParams",
    "CrafterUnavailable",
    "CrafterWorld",
    "DEFAULT_INVENTORY_WEIGHTS",
    "EpisodeRewards",
    "FrameConfig",
    "HeuristicAgent",
    "CRAFTER_INSTALL_HINT",
    "MAX_ACTIONS_PER_CALL",
    "RandomAgent",
    "StepRewardConfig",
    "TIERS",
    "TraitCache",
    "achievement_depth",
    "difficulty_of",
    "goal_completion",
    "make_crafter_env",
    "read_view",
    "session_frames",
    "tool_schemas",
    "unique_achievements",
    "write_frames",
]
