"""The single-turn math environment: one problem, one answer, scored by the math reward path."""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from proofgym.config import RunConfig, load_run_config, parse_run_config
from proofgym.envs import (
    AnswerTask,
    Observation,
    SingleAnswerEnv,
    answer_reward_function,
    answer_tool,
    run_config_version,
    validated_env_config,
)
from proofgym.formats import load_yaml
from proofgym.math._answer import build_math_prompt
from proofgym.math._problems import MathProblem, resolve_problems
from proofgym.rewards import RewardFunction

ANSWER_TOOL = answer_tool(
    "Submit your complete answer (reasoning, then the final answer as \\boxed{...}); this ends the episode.")


def default_math_run_config(problems: str = "builtin") -> RunConfig:
    """The math reward path shipped as ``proofgym/math/math.run.yaml`` (``configs/run/math.yaml`` links to it), its
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


class MathEnv(SingleAnswerEnv):
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

    blocking = True  # answers are verified in worker processes

    def __init__(self, *, config: MathEnvConfig | None = None, reward_function: RewardFunction | None = None) -> None:
        self.config = config or MathEnvConfig()
        self.problems = resolve_problems(self.config.problems)
        self._order = sorted(self.problems)
        super().__init__(reward_function or shared_math_reward_function(self.config.problems, self.config.run_config),
                         tool=ANSWER_TOOL, max_turns=self.config.max_turns)

    def problem_for(self, seed: int) -> MathProblem:
        """The problem ``reset(seed)`` poses."""
        return self.problems[self._order[(seed + self.config.seed_offset) % len(self._order)]]

    @property
    def problem(self) -> MathProblem:
        """The current episode's problem (for tests and tooling; never shown to the agent whole)."""
        return self.problems[self.task.info["problem_id"]]

    def oracle_actions(self, seed: int) -> list[Any]:
        """The known-good answer to episode ``seed``: the gold answer, boxed (resets the episode)."""
        self.reset(seed)
        answer = self.problem.answer.strip().strip("$").strip()
        return [{"tool": ANSWER_TOOL.name, "args": {"completion": f"The answer is \\boxed{{{answer}}}."}}]

    def _pose(self, seed: int) -> AnswerTask:
        problem = self.problem_for(seed)
        prompt = build_math_prompt(problem)
        data = {"messages": [{"role": "user", "content": prompt}], "problem_id": problem.id, "task": problem.task,
                "seed": seed}
        return AnswerTask(Observation(prompt, data), prompt, info={"problem_id": problem.id})

    def _judge(self, item: Any) -> dict[str, Any]:
        passed = item.outcome == "certified"  # certified equal to the gold answer (the parser reads it by prompt)
        return {"correct": passed, "passed": passed, "gold": self.problem.answer}


def shared_math_reward_function(problems: str = "builtin", run_config: str | None = None) -> RewardFunction:
    """The process's math reward function for ``problems`` and a run config file (``None``: the shipped one),
    built once per file version (path, size, modification time) and shared."""
    return _reward_function(problems, run_config_version(run_config))


@functools.lru_cache(maxsize=16)
def _reward_function(problems: str, run_config: tuple[str, int, int] | None) -> RewardFunction:
    run = default_math_run_config(problems) if run_config is None else load_run_config(run_config[0])
    return answer_reward_function(run)


def make_math_env(*, reward_function: RewardFunction | None = None, **config: Any) -> MathEnv:
    """``make("math", **config)``: the config's fields as keyword arguments (validated strictly), plus
    ``reward_function``."""
    return MathEnv(config=validated_env_config(MathEnvConfig, "math", config), reward_function=reward_function)
