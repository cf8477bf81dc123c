"""The single-turn math environment: one problem, one answer, scored by the math reward path."""

from __future__ import annotations

import functools
import importlib.resources
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proofgym.config import ConfigError, RunConfig, load_run_config, parse_run_config
from proofgym.core import describe_validation_error
from proofgym.envs import MAX_ACTION_CHARS, Observation, StepResult, Tool, ToolCall, ToolEnv, ToolResult
from proofgym.formats import load_yaml
from proofgym.math._answer import build_math_prompt
from proofgym.math._problems import MathProblem, resolve_problems
from proofgym.rewards import RewardFunction

ANSWER_TOOL = Tool(
    "answer",
    "Submit your complete answer (reasoning, then the final answer as \\boxed{...}); this ends the episode.",
    {
        "type": "object",
        "properties": {"completion": {"type": "string", "description": "your full answer text"}},
        "required": ["completion"],
        "additionalProperties": False,
    },
)
_CALL_KEYS = frozenset({"tool", "name", "function"})


def default_math_run_config(problems: str = "builtin") -> RunConfig:
    """The math reward path shipped as ``proofgym/math/math.run.yaml`` (``configs/math.yaml`` links to it), its
    parser reading gold answers from ``problems``."""
    path = Path(str(importlib.resources.files("proofgym.math") / "math.run.yaml"))
    data = load_yaml(path.read_text(encoding="utf-8"))
    data["parser"] = {**data.get("parser", {}), "problems": problems}
    return parse_run_config(data, source=path)


class MathEnvConfig(BaseModel):
    """Configuration of the math environment.

    ``problems``: ``builtin`` (the shipped reasoning-gym set) or a JSON Lines file of ``{id, question, answer}``.
    Seed ``s`` is problem ``(s + seed_offset) mod N`` in id order. ``chat``: the prompt as one user message in
    ``data["messages"]`` (always) and as the observation text. ``run_config``: a run config whose reward path
    scores the answers, instead of the shipped one (its parser must read the same problems). ``max_turns`` above
    1 lets the agent retry after a malformed tool call.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    problems: str = Field("builtin", min_length=1)
    seed_offset: int = Field(0, ge=0, le=1 << 62)
    max_turns: int = Field(1, ge=1, le=100)
    run_config: str | None = Field(None, min_length=1)


class MathEnv(ToolEnv):
    """Answer one math problem; the answer is scored by the math reward path (parser, Math-Verify, shaper).

    The observation's ``text`` is the prompt (:func:`~proofgym.math.build_math_prompt`) and its ``data`` holds
    ``messages``, ``problem_id``, ``task`` and ``seed``, never the gold answer. The action is ``{"tool": "answer",
    "args": {"completion": ...}}`` or the completion as plain text. The step's reward is the shaped reward; its
    ``info`` carries ``verdict`` (both parsed forms in its evidence), ``outcome``, ``reward_components``,
    ``correct`` and ``passed`` (certified equal to the gold answer), ``abstained`` (the answer could not be
    verified: a timeout or crash, reward 0.0, a sample to drop), ``gold`` and ``reason``.

    Instances share one reward function per (problems, run config) in the process (thread-safe; sharing shares
    its verification cache and worker processes).
    """

    accepts_text = True
    blocking = True  # answers are verified in worker processes

    def __init__(self, *, config: MathEnvConfig | None = None, reward_function: RewardFunction | None = None) -> None:
        self.config = config or MathEnvConfig()
        super().__init__([ANSWER_TOOL], max_turns=self.config.max_turns)
        self.problems = resolve_problems(self.config.problems)
        self._order = sorted(self.problems)
        self.reward_function = reward_function or shared_math_reward_function(self.config.problems,
                                                                               self.config.run_config)
        self._floor = float(self.reward_function.shaper.bounds[0])
        self._problem: MathProblem | None = None
        self._prompt = ""
        self._answered = False

    def problem_for(self, seed: int) -> MathProblem:
        """The problem ``reset(seed)`` poses."""
        return self.problems[self._order[(seed + self.config.seed_offset) % len(self._order)]]

    @property
    def problem(self) -> MathProblem:
        """The current episode's problem (for tests and tooling; never shown to the agent whole)."""
        if self._problem is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._problem

    def oracle_actions(self, seed: int) -> list[Any]:
        """The known-good answer to episode ``seed``: the gold answer, boxed (resets the episode)."""
        self.reset(seed)
        answer = self.problem.answer.strip().strip("$").strip()
        return [{"tool": ANSWER_TOOL.name, "args": {"completion": f"The answer is \\boxed{{{answer}}}."}}]

    def step(self, action: Any) -> StepResult:
        """Score the answer (a tool call or plain text); nothing in ``action`` makes this raise."""
        text = _plain_text(action)
        result = super().step(ToolCall(ANSWER_TOOL.name, {"completion": text}) if text is not None else action)
        if result.truncated and not self._answered:
            components = {**result.info["reward_components"], "no_answer": self._floor}
            info = {**result.info, "reward_components": components, "outcome": "no_answer", "verdict": None,
                    "correct": False, "passed": False, "abstained": False}
            return StepResult(result.observation, sum(components.values()), True, True, info)
        return result

    def _reset(self, seed: int) -> Observation:
        self._problem = self.problem_for(seed)
        self._prompt = build_math_prompt(self._problem)
        self._answered = False
        data = {"messages": [{"role": "user", "content": self._prompt}], "problem_id": self._problem.id,
                "task": self._problem.task, "seed": seed}
        return Observation(self._prompt, data)

    def _call_tool(self, call: ToolCall) -> ToolResult:
        self._answered = True
        item = self.reward_function.score([self._prompt], [call.args["completion"]], None)[0]
        if item.reward is None:
            rewards: dict[str, float] = {}
        elif item.outcome == "format_error":
            rewards = {"format_failure": item.reward}
        else:
            rewards = dict(item.contributions)
            residual = item.reward - sum(rewards.values())
            if residual:  # the shaper clamped the sum into its bounds
                rewards["clamp"] = residual
        passed = item.outcome == "certified"
        info = {
            "tool": ANSWER_TOOL.name,
            "verdict": None if item.verdict is None else item.verdict.to_dict(),
            "outcome": item.outcome,
            "correct": passed,
            "passed": passed,
            "gold": self.problem.answer,
            "reason": item.reason,
            "format_error": item.format_error,
            "abstained": item.reward is None,
            "problem_id": self.problem.id,
        }
        reward = "none (the answer could not be verified)" if item.reward is None else f"{item.reward:+.3f}"
        data = {"outcome": item.outcome, "reward": item.reward}
        return ToolResult(Observation(f"Answer scored: {item.outcome}, reward {reward}.", data), rewards,
                          done=True, info=info)


def shared_math_reward_function(problems: str = "builtin", run_config: str | None = None) -> RewardFunction:
    """The process's math reward function for ``problems`` and a run config file (``None``: the shipped one),
    built once per file version (path, size, modification time) and shared."""
    if run_config is None:
        return _reward_function(problems, None)
    path = Path(run_config).resolve()
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError(f"{run_config}: config file not found") from None
    return _reward_function(problems, (str(path), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _reward_function(problems: str, run_config: tuple[str, int, int] | None) -> RewardFunction:
    run = default_math_run_config(problems) if run_config is None else load_run_config(run_config[0])
    where = str(run.source) if run.source is not None else f"run config {run.name!r}"
    if run.reward.on_invalid == "raise" or run.error_budget.action == "abort":
        raise ConfigError(f"{where}: an environment scores one answer at a time and must never raise: "
                          "use reward.on_invalid abstain or floor, and error_budget.action warn")
    return run.reward_function()


def _plain_text(action: Any) -> str | None:
    """The completion, when ``action`` is plain text rather than a JSON tool call; otherwise ``None``."""
    if not isinstance(action, str):
        return None
    if len(action) <= MAX_ACTION_CHARS and action.lstrip().startswith("{"):
        try:
            decoded = json.loads(action)
        except (ValueError, RecursionError):
            return action
        if isinstance(decoded, dict) and _CALL_KEYS & set(decoded):
            return None
    return action


def make_math_env(*, reward_function: RewardFunction | None = None, **config: Any) -> MathEnv:
    """``make("math", **config)``: the config's fields as keyword arguments (validated strictly), plus
    ``reward_function``."""
    try:
        validated = MathEnvConfig.model_validate(config, strict=True)
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(error) for error in exc.errors())
        raise ConfigError(f"environment 'math': invalid config: {problems} "
                          f"(the keys are {sorted(MathEnvConfig.model_fields)})",
                          problems=exc.errors(include_url=False, include_context=False)) from None
    return MathEnv(config=validated, reward_function=reward_function)
