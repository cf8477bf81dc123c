"""The environment contract: every optional hook is declared with its default and read through ``env_hook``; a
step reports its judgement through StepResult's typed fields only (``info`` mirrors them, never the other way)."""

from __future__ import annotations

from typing import Any

import pytest

from proofgym.envs import (
    HOOK_DEFAULTS,
    BlockPartition,
    EnvironmentHooks,
    Observation,
    SplitEnv,
    SplitSelection,
    StepResult,
    ToolCall,
    ToolResult,
    env_hook,
    make,
    seed_partition,
)
from proofgym.envs._splits import DEFAULT_PARTITION

from ._support import FINISH, CounterEnv


class BareEnv:
    """An environment that meets the protocol and nothing more (no base class, no hook)."""

    tools: list[dict[str, Any]] = []

    def reset(self, seed: int) -> Observation:
        return Observation(str(seed))

    def step(self, action: Any) -> StepResult:
        return StepResult(Observation("done"), 0.0, True)

    def close(self) -> None:
        pass


def test_every_hook_is_declared_with_its_default():
    assert dict(HOOK_DEFAULTS) == {"accepts_text": False, "blocking": True, "seed_partition": None,
                                   "oracle_actions": None, "rubrics": None}
    with CounterEnv() as env:
        assert isinstance(env, EnvironmentHooks)
        for name, default in HOOK_DEFAULTS.items():
            assert env_hook(env, name) == default
            assert env_hook(BareEnv(), name) == default  # the same defaults without the base class


def test_an_environment_overrides_a_hook_and_an_unknown_name_is_refused():
    class Oracle(CounterEnv):
        accepts_text = True
        blocking = False

        def oracle_actions(self, seed: int) -> list[Any]:
            return [{"tool": "add", "args": {"n": seed}}, {"tool": "finish", "args": {}}]

    with Oracle() as env:
        assert env_hook(env, "accepts_text") is True and env_hook(env, "blocking") is False
        assert env_hook(env, "oracle_actions")(3)[0] == {"tool": "add", "args": {"n": 3}}
        with pytest.raises(ValueError, match="no environment hook"):
            env_hook(env, "acceptstext")


def test_the_seed_partition_hook_picks_the_split():
    class Blocks(CounterEnv):
        seed_partition = BlockPartition(4)

    assert seed_partition(CounterEnv()) is DEFAULT_PARTITION
    assert seed_partition(Blocks()) == BlockPartition(4)


def test_a_split_of_an_environment_without_an_oracle_has_none():
    class Oracle(CounterEnv):
        def oracle_actions(self, seed: int) -> list[Any]:
            return [seed]

    assert env_hook(SplitEnv(CounterEnv(), SplitSelection("test")), "oracle_actions") is None
    split = SplitEnv(Oracle(), SplitSelection("test"))
    assert env_hook(split, "oracle_actions")(0) == [9] and env_hook(split, "oracle_actions")(1) == [19]


def test_typed_fields_are_never_read_back_from_info():
    step = StepResult(Observation("x"), 1.0, True, info={"outcome": "certified", "passed": True})
    assert step.outcome is None and step.passed is None and step.outcome_score is None
    typed = StepResult(Observation("x"), 1.0, True, outcome="certified", passed=True, components={"a": 1.0})
    assert typed.info == {"outcome": "certified", "passed": True, "reward_components": {"a": 1.0}}
    assert typed.outcome_score == 1.0


def test_a_tool_env_step_carries_its_tools_judgement_as_typed_fields():
    class Judged(CounterEnv):
        def _call_tool(self, call: ToolCall) -> ToolResult:
            verdict = {"outcome": "certified", "verifier": "counter"}
            info = {"outcome": "certified", "verdict": verdict, "correct": True, "passed": True,
                    "abstained": False, "note": "kept"}
            return ToolResult(Observation("judged"), {"finish": 1.0}, done=True, info=info)

    with Judged(step_penalty=0.25) as env:
        env.reset(0)
        step = env.step({"tool": FINISH.name, "args": {}})
    assert (step.outcome, step.correct, step.passed, step.abstained) == ("certified", True, True, False)
    assert step.verdict == {"outcome": "certified", "verifier": "counter"}
    assert step.components == {"finish": 1.0, "step_penalty": -0.25} == step.info["reward_components"]
    assert list(step.info) == ["outcome", "verdict", "correct", "passed", "abstained", "note", "turn",
                               "reward_components"]  # the environment's order, as traces keep it


def test_a_single_answer_env_reports_a_missing_answer_as_typed_fields():
    with make("grant_eligibility", max_turns=1) as env:
        env.reset(0)
        step = env.step('{"tool": "nope", "args": {}}')
    assert (step.outcome, step.correct, step.passed, step.abstained, step.verdict) == \
        ("no_answer", False, False, False, None)
    assert step.components == step.info["reward_components"] and "no_answer" in step.components
    assert step.outcome_score == 0.0
