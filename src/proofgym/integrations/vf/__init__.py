"""proofgym's environments as verifiers 0.4 (``verifiers.v1``) tasksets: ``vf-eval proofgym-<env>`` (extra
``verifiers``).

- :class:`ProofgymTaskset`: any environment, named by the ``env`` config field (the ``proofgym_env`` module:
  ``vf-eval proofgym-env --env.taskset.env loan``, plugins' environments included); :func:`taskset_for` makes one
  fixed to an environment (the ``proofgym_<env>`` modules: ``vf-eval proofgym-loan``).
- A task is one seed: its prompt is the environment's first observation, as ``proofgym eval`` sends it; its reward
  (``proofgym``) replays the conversation's actions through the environment's own ``step``
  (:func:`score_turns`), so a completion scores what it scores in ``proofgym eval``, and ``trace.info["proofgym"]``
  keeps the verdict, its evidence and the certificate check.
- :class:`EnvToolset`: a tool environment's tools (Verilog, Crafter, fact finding) as an MCP server, one per rollout.

Importing this package imports verifiers; :mod:`proofgym.integrations` does not import it. The tool server's module
is imported on first use of its names (verifiers runs it with ``python -m``).
"""

from typing import TYPE_CHECKING, Any

from proofgym.integrations.vf._episode import EpisodeScore, ModelTurn, score_turns
from proofgym.integrations.vf._taskset import (
    ProofgymTask,
    ProofgymTaskConfig,
    ProofgymTaskData,
    ProofgymTaskset,
    ProofgymTasksetConfig,
    taskset_for,
)

if TYPE_CHECKING:
    from proofgym.integrations.vf._toolset import EnvToolset, EnvToolsetConfig

__all__ = [
    "EnvToolset",
    "EnvToolsetConfig",
    "EpisodeScore",
    "ModelTurn",
    "ProofgymTask",
    "ProofgymTaskConfig",
    "ProofgymTaskData",
    "ProofgymTaskset",
    "ProofgymTasksetConfig",
    "score_turns",
    "taskset_for",
]


def __getattr__(name: str) -> Any:
    if name in ("EnvToolset", "EnvToolsetConfig"):
        from proofgym.integrations.vf import _toolset

        return getattr(_toolset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
