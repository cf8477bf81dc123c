"""A base class for tool-calling environments: the episode bookkeeping every such environment shares."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import TracebackType
from collections.abc import Mapping, Sequence
from typing import Any, Self

from proofgym.envs._core import EnvironmentHooks, Observation, StepResult
from proofgym.envs._tools import ActionError, Tool, ToolCall, parse_action, tool_table


@dataclass(frozen=True)
class ToolResult:
    """What a tool call did: the observation, the reward components it earned, whether it ends the episode.

    ``rewards`` maps component names to amounts; the step's reward is their sum less the step penalty. A tool that
    judges an answer says how in ``info`` under the keys of :class:`~proofgym.envs.StepResult`'s typed fields
    (``outcome``, ``verdict``, ``correct``, ``passed``, ``abstained``), where the environment's trace keeps them in
    the order it wrote them: :class:`ToolEnv` sets the step's typed fields from them.
    """

    observation: Observation
    rewards: Mapping[str, float] = field(default_factory=dict)
    done: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)


#: The typed fields of a step a tool's ``info`` may report, and the type each must have to count.
_TYPED: dict[str, type] = {"outcome": str, "verdict": Mapping, "correct": bool, "passed": bool, "abstained": bool}


def typed_fields(info: Mapping[str, Any]) -> dict[str, Any]:
    """The typed :class:`~proofgym.envs.StepResult` fields a tool's result reports in its ``info``: each key of
    ``outcome``, ``verdict``, ``correct``, ``passed`` and ``abstained`` whose value has the field's type."""
    return {name: value for name, kind in _TYPED.items() if isinstance(value := info.get(name), kind)}


class ToolEnv(EnvironmentHooks, ABC):
    """Base class of tool-calling environments (one instance per rollout).

    It parses and validates actions against the tools' schemas, counts turns, charges the step
    penalty, and truncates at ``max_turns``. A malformed action costs a turn and the step penalty
    and yields an error observation with ``info["error"]``; the episode goes on. Every step's
    ``info`` carries ``turn`` and ``reward_components`` (which sum to the step's reward, the
    penalty included as ``step_penalty``).

    A subclass implements ``_reset(seed)``, ``_call_tool(call)`` (only ever given a validated call)
    and, when it holds resources, ``_close()``. Calling ``step`` before ``reset`` or after the
    episode ended, or ``reset`` after ``close``, is a bug in the calling loop and raises
    ``RuntimeError``.
    """

    def __init__(self, tools: Sequence[Tool], *, max_turns: int, step_penalty: float = 0.0) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if not (math.isfinite(step_penalty) and step_penalty >= 0):
            raise ValueError(f"step_penalty must be a finite number >= 0, got {step_penalty}")
        self._tools = tool_table(tools)
        self._max_turns = max_turns
        self._step_penalty = float(step_penalty)
        self._turn = 0
        self._started = self._over = self._closed = False

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools in the OpenAI tool format."""
        return [tool.to_openai() for tool in self._tools.values()]

    def reset(self, seed: int) -> Observation:
        """Start a new episode for ``seed``; the same seed gives the same task."""
        if self._closed:
            raise RuntimeError("reset() called on a closed environment")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        self._turn = 0
        self._over = False
        observation = self._reset(seed)
        self._started = True
        return observation

    def step(self, action: Any) -> StepResult:
        """Apply one tool call; nothing in ``action`` makes this raise."""
        if not self._started or self._closed:
            raise RuntimeError("step() called before reset()" if not self._closed else "step() on a closed environment")
        if self._over:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        self._turn += 1
        error = None
        try:
            call = parse_action(action, self._tools)
        except ActionError as exc:
            error = str(exc)
            result = self._unreadable(error)
        else:
            result = self._call_tool(call)
        components = {**result.rewards, "step_penalty": -self._step_penalty}
        truncated = not result.done and self._turn >= self._max_turns
        self._over = result.done or truncated
        info = {**result.info, "turn": self._turn, "reward_components": components}
        if error is not None:
            info["error"] = error
        return StepResult(result.observation, sum(components.values()), self._over, truncated, info,
                          components=components, **typed_fields(result.info))

    def close(self) -> None:
        """Release what the environment holds; safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @abstractmethod
    def _reset(self, seed: int) -> Observation:
        """Set up the episode for ``seed`` and return the first observation."""

    @abstractmethod
    def _call_tool(self, call: ToolCall) -> ToolResult:
        """Run a validated tool call."""

    def _unreadable(self, error: str) -> ToolResult:
        """What an action that is not a valid call of any tool yields (it runs nothing): an error observation. An
        environment whose steps always carry its state in ``info`` (an evaluation reads the last step's) says so
        here too."""
        return ToolResult(Observation(f"Error: {error}", {"error": error}))

    def _close(self) -> None:
        """Release resources; called once, by the first ``close()``."""
