"""A scripted agent that writes the reference earns the top reward; a wrong design does not."""

import pytest

from proofgym.verilog import VerilogEnv, VerilogEnvConfig

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PENALTY = 0.01
PROBLEMS = ["Prob001_and_gate", "Prob019_dff_sync_reset"]


def play(env, actions):
    return [env.step(action) for action in actions]


@pytest.mark.parametrize("problem_id", PROBLEMS)
def test_writing_the_reference_then_compile_simulate_submit_returns_one_less_the_step_penalties(problem_id):
    config = VerilogEnvConfig(problem_id=problem_id, step_penalty=PENALTY)
    with VerilogEnv(config=config) as env:
        env.reset(0)
        design = reference_design(env.problem)
        results = play(env, [{"tool": "write_file", "args": {"path": "top.v", "content": design}},
                             {"tool": "compile"}, {"tool": "simulate"}, {"tool": "submit"}])
    assert [r.done for r in results] == [False, False, False, True] and not results[-1].truncated
    assert sum(r.reward for r in results) == pytest.approx(1.0 - 4 * PENALTY)
    shares = config.rewards.shares()
    assert [r.info["reward_components"] for r in results] == [
        {"step_penalty": -PENALTY},
        {"compile": shares["compile"], "step_penalty": -PENALTY},
        {"simulate": shares["simulate"], "step_penalty": -PENALTY},
        {"submit": shares["submit"], "step_penalty": -PENALTY},
    ]
    assert results[-1].info["outcome"] == "certified"
    assert results[-1].observation.data["passed"] is True


def test_a_solved_episode_returns_one_whichever_checks_it_ran():
    with VerilogEnv(config=VerilogEnvConfig(problem_id=PROBLEMS[0])) as env:
        env.reset(0)
        design = reference_design(env.problem)
        results = play(env, [{"tool": "write_file", "args": {"path": "top.v", "content": design}}, {"tool": "submit"}])
    assert sum(r.reward for r in results) == pytest.approx(1.0)
    assert results[-1].info["paid"] == ["compile", "simulate", "submit"]


def test_a_wrong_design_does_not_reach_the_top_reward():
    with VerilogEnv(config=VerilogEnvConfig(problem_id=PROBLEMS[0])) as env:
        env.reset(0)
        wrong = reference_design(env.problem).replace("a & b", "a | b")
        results = play(env, [{"tool": "write_file", "args": {"path": "top.v", "content": wrong}},
                             {"tool": "simulate"}, {"tool": "submit"}])
    assert results[1].observation.data["passed"] is False and results[1].observation.data["mismatches"] > 0
    assert results[-1].done and results[-1].info["outcome"] == "refuted"
    # Only the compile credit: the design compiles, nothing passed.
    assert sum(r.reward for r in results) == pytest.approx(VerilogEnvConfig().rewards.shares()["compile"])
