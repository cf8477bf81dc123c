"""A base class for single-answer environments: one task, one answer (a tool call or plain text), scored once.

The math environment, the rulebook environments and plugins such as the example parity environment share what
makes an answer an answer: which actions are the completion as text, what an episode that ends without an answer
scores, and how a scored item becomes reward components. One copy, so they cannot drift apart (two copies of the
plain-text rule once did: UTF-8 bytes were an answer to one environment and a malformed call to the other).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from proofgym.config import ConfigError, RunConfig
from proofgym.core import describe_validation_error
from proofgym.envs._core import Observation, StepResult
from proofgym.envs._tool_env import ToolEnv, ToolResult
from proofgym.envs._tools import CALL_KEYS, MAX_ACTION_CHARS, Tool, ToolCall
from proofgym.rewards import RewardFunction

M = TypeVar("M", bound=BaseModel)


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


def answer_reward_function(run: RunConfig) -> RewardFunction:
    """The reward function of ``run`` for an environment that scores one answer at a time (checked first with
    :func:`check_answer_run_config`)."""
    check_answer_run_config(run)
    return run.reward_function()


def validated_env_config(model: type[M], env_name: str, config: Mapping[str, Any]) -> M:
    """``config`` validated strictly as ``model`` (``max_turns=True`` is not a number); a
    :class:`~proofgym.core.ConfigError` naming the environment, each problem and the keys there are."""
    try:
        return model.model_validate(config, strict=True)
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(error) for error in exc.errors())
        raise ConfigError(f"environment {env_name!r}: invalid config: {problems} "
                          f"(the keys are {sorted(model.model_fields)})",
                          problems=exc.errors(include_url=False, include_context=False)) from None


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


@dataclass(frozen=True)
class AnswerTask:
    """One episode's task, as :meth:`SingleAnswerEnv._pose` sets it up: the ``observation`` the agent sees, the
    ``prompt`` and ``reference`` the reward function scores the answer against (``reference``: the row of
    reference fields, such as ``gold``, or ``None``), and ``info``, what the answer step's ``info`` ends with
    (an id of the task)."""

    observation: Observation
    prompt: Any
    reference: Mapping[str, Any] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)


class SingleAnswerEnv(ToolEnv):
    """Base class of environments whose episode is one answer, scored by a reward function.

    The action is ``{"tool": "answer", "args": {"completion": ...}}`` or the completion as plain text (a string or
    UTF-8 bytes that are not a JSON tool call). The answer ends the episode; an episode that reaches ``max_turns``
    without one (malformed calls only) scores the reward function's floor as ``no_answer``, so a malformed call
    never beats a wrong answer.

    A subclass implements ``_pose(seed)``: the episode's :class:`AnswerTask`; and ``oracle_actions(seed)`` when it
    knows a right answer. The answer is scored here: the reward function scores it against the task's prompt and
    reference, the step's reward components are the scored item's (:func:`reward_components`), and its ``info``
    holds ``tool``, ``verdict``, ``outcome``, what :meth:`_judge` says of the answer (by default
    ``claimed_decision``, ``correct``, ``passed`` and ``gold``), ``reason``, ``format_error``, ``abstained`` (the
    answer could not be verified: no reward, a sample to drop) and the task's ``info``.
    """

    accepts_text = True

    def __init__(self, reward_function: Any, *, tool: Tool, max_turns: int = 1) -> None:
        """``tool``: the environment's :func:`answer_tool` (its description tells the agent what to answer)."""
        super().__init__([tool], max_turns=max_turns)
        self.reward_function = reward_function
        self._tool_name = tool.name
        self._floor = float(reward_function.shaper.bounds[0])
        self._answered = False
        self._task: AnswerTask | None = None

    @property
    def task(self) -> AnswerTask:
        """The current episode's task (for tests and tooling; never shown to the agent whole)."""
        if self._task is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._task

    def step(self, action: Any) -> StepResult:
        """Score the answer (a tool call or plain text); nothing in ``action`` makes this raise."""
        text = plain_text_answer(action)
        result = super().step(ToolCall(self._tool_name, {"completion": text}) if text is not None else action)
        if result.truncated and not self._answered:
            components = {**result.info["reward_components"], "no_answer": self._floor}
            info = {**result.info, "reward_components": components, "outcome": "no_answer", "verdict": None,
                    "correct": False, "passed": False, "abstained": False}
            return StepResult(result.observation, sum(components.values()), True, True, info, outcome="no_answer",
                              components=components, correct=False, passed=False, abstained=False)
        return result

    def _reset(self, seed: int) -> Observation:
        self._answered = False
        self._task = self._pose(seed)
        return self._task.observation

    def _call_tool(self, call: ToolCall) -> ToolResult:
        self._answered = True
        return self._score(call.args["completion"])

    def _score(self, completion: str) -> ToolResult:
        """Score the answer text against the task: its observation, reward components and ``info``."""
        task = self.task
        references = None if task.reference is None else [task.reference]
        item = self.reward_function.score([task.prompt], [completion], references)[0]
        judged = self._judge(item)
        info = {
            "tool": self._tool_name,
            "verdict": None if item.verdict is None else item.verdict.to_dict(),
            "outcome": item.outcome,
            **judged,
            "reason": item.reason,
            "format_error": item.format_error,
            "abstained": item.reward is None,
            **task.info,
        }
        reward = "none (the answer could not be verified)" if item.reward is None else f"{item.reward:+.3f}"
        data = {"outcome": item.outcome, "reward": item.reward}
        if "claimed_decision" in judged:
            data["claimed_decision"] = judged["claimed_decision"]
        text = f"Answer scored: {item.outcome}, reward {reward}."
        return ToolResult(Observation(text, data), reward_components(item), done=True, info=info)

    def _judge(self, item: Any) -> dict[str, Any]:
        """What the scored answer (a :class:`~proofgym.rewards.ScoredItem`) says, in the order ``info`` lists it.

        By default, for a task that asks for a decision with a ``gold`` one in its reference: ``claimed_decision``
        (the answer's), ``correct`` (it is the gold one), ``passed`` (the top outcome: certified, correct and
        grounded on the task's own facts) and ``gold``."""
        claimed = None if item.claim is None else item.claim.decision
        gold = None if self.task.reference is None else self.task.reference.get("gold")
        correct = claimed is not None and isinstance(gold, str) and claimed.strip().casefold() == gold.casefold()
        passed = all(item.components.get(name) == 1.0 for name in ("certified", "correct", "grounded"))
        return {"claimed_decision": claimed, "correct": correct, "passed": passed, "gold": gold}

    @abstractmethod
    def _pose(self, seed: int) -> AnswerTask:
        """Set up the episode for ``seed``: its :class:`AnswerTask`."""
