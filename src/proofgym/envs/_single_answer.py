"""A base class for single-answer environments: one task, one answer (a tool call or plain text), scored once.

The math environment, the rulebook environments and plugins such as the example parity environment share what
makes an answer an answer: which actions are the completion as text, what an episode that ends without an answer
scores, and how a scored item becomes reward components. One copy, so they cannot drift apart (two copies of the
plain-text rule once did: UTF-8 bytes were an answer to one environment and a malformed call to the other).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from pathlib import Path
from typing import Any

from proofgym.config import ConfigError, RunConfig
from proofgym.envs._core import Observation, StepResult
from proofgym.envs._tool_env import ToolEnv, ToolResult
from proofgym.envs._tools import CALL_KEYS, MAX_ACTION_CHARS, Tool, ToolCall


def answer_tool(description: str) -> Tool:
    """The ``answer`` tool: one string argument, ``completion``, the whole answer text."""
    return Tool("answer", description, {
        "type": "object",
        "properties": {"completion": {"type": "string", "description": "your full answer text"}},
        "required": ["completion"],
        "additionalProperties": False,
    })


def plain_text_answer(action: Any) -> str | None:
    """The completion, when ``action`` is the answer as plain text (a ``str``, or UTF-8 ``bytes``) rather than a
    JSON tool call; otherwise ``None`` (the tool-call parser then reads it, or reports why it cannot)."""
    if isinstance(action, (bytes, bytearray)):
        try:
            action = bytes(action).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(action, str):
        return None
    if len(action) <= MAX_ACTION_CHARS and action.lstrip().startswith("{"):
        try:
            decoded = json.loads(action)
        except (ValueError, RecursionError):
            return action
        if isinstance(decoded, dict) and CALL_KEYS & set(decoded):
            return None
    return action


def reward_components(item: Any) -> dict[str, float]:
    """The reward components of a scored answer (a :class:`~proofgym.rewards.ScoredItem`): none when it abstained,
    ``format_failure`` when it could not be parsed, else the shaper's contributions plus ``clamp`` when the shaper
    clamped their sum into its bounds. They sum to the item's reward."""
    if item.reward is None:
        return {}
    if item.outcome == "format_error":
        return {"format_failure": item.reward}
    rewards = dict(item.contributions)
    residual = item.reward - sum(rewards.values())
    if residual:
        rewards["clamp"] = residual
    return rewards


def check_answer_run_config(run: RunConfig) -> None:
    """Refuse a reward path that raises on an invalid verification or aborts on its error budget: an environment
    scores one answer at a time, and its step must never raise."""
    where = str(run.source) if run.source is not None else f"run config {run.name!r}"
    if run.reward.on_invalid == "raise":
        raise ConfigError(f"{where}: reward.on_invalid: an environment cannot raise on an invalid "
                          "verification; use abstain or floor")
    if run.error_budget.action == "abort":
        raise ConfigError(f"{where}: error_budget.action: an environment scores one answer at a time and "
                          "cannot abort; use warn")


def run_config_version(run_config: str | None) -> tuple[str, int, int] | None:
    """What identifies a run config file's current version (its resolved path, size and modification time), the
    key under which an environment shares the reward function built from it; ``None`` for no file."""
    if run_config is None:
        return None
    path = Path(run_config).resolve()
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError(f"{run_config}: config file not found") from None
    return str(path), stat.st_size, stat.st_mtime_ns


class SingleAnswerEnv(ToolEnv):
    """Base class of environments whose episode is one answer, scored by a reward function.

    The action is ``{"tool": "answer", "args": {"completion": ...}}`` or the completion as plain text (a string or
    UTF-8 bytes that are not a JSON tool call). The answer ends the episode; an episode that reaches ``max_turns``
    without one (malformed calls only) scores the reward function's floor as ``no_answer``, so a malformed call
    never beats a wrong answer. A subclass implements ``_pose(seed)`` (the episode's observation) and
    ``_score(completion)`` (the :class:`ToolResult` of the answer).
    """

    accepts_text = True

    def __init__(self, reward_function: Any, *, tool: Tool, max_turns: int = 1) -> None:
        """``tool``: the environment's :func:`answer_tool` (its description tells the agent what to answer)."""
        super().__init__([tool], max_turns=max_turns)
        self.reward_function = reward_function
        self._floor = float(reward_function.shaper.bounds[0])
        self._answered = False

    def step(self, action: Any) -> StepResult:
        """Score the answer (a tool call or plain text); nothing in ``action`` makes this raise."""
        text = plain_text_answer(action)
        result = super().step(ToolCall("answer", {"completion": text}) if text is not None else action)
        if result.truncated and not self._answered:
            components = {**result.info["reward_components"], "no_answer": self._floor}
            info = {**result.info, "reward_components": components, "outcome": "no_answer", "verdict": None,
                    "correct": False, "passed": False, "abstained": False}
            return StepResult(result.observation, sum(components.values()), True, True, info, outcome="no_answer",
                              components=components, correct=False, passed=False, abstained=False)
        return result

    def _reset(self, seed: int) -> Observation:
        self._answered = False
        return self._pose(seed)

    def _call_tool(self, call: ToolCall) -> ToolResult:
        self._answered = True
        return self._score(call.args["completion"])

    @abstractmethod
    def _pose(self, seed: int) -> Observation:
        """Set up the episode for ``seed`` and return the task's observation."""

    @abstractmethod
    def _score(self, completion: str) -> ToolResult:
        """Score the answer text: its observation, reward components and ``info`` (``done`` is set)."""
