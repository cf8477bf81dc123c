"""make("verilog", ...) builds a configured environment; the reward configuration is normalised and checked."""

import pytest

from proofgym.envs import Environment, make
from proofgym.verilog import VerilogEnv, VerilogEnvConfig, VerilogRewards, get_problem

from ._support import reference_design, requires_judge


@requires_judge
def test_make_verilog_builds_a_working_environment():
    with make("verilog", problem_id="Prob001_and_gate", max_turns=3, step_penalty=0.01) as env:
        assert isinstance(env, VerilogEnv) and isinstance(env, Environment)
        assert [tool["function"]["name"] for tool in env.tools] == ["write_file", "compile", "simulate", "submit"]
        env.reset(0)
        env.step({"tool": "write_file", "args": {"path": "top.v", "content": reference_design(env.problem)}})
        result = env.step({"name": "submit", "arguments": "{}"})
    assert result.done and result.reward == pytest.approx(1.0 - 0.01)


def test_make_passes_problems_through():
    problem = get_problem("Prob004_mux2")
    with make("verilog", problems=[problem]) as env:
        assert env.reset(123).data["problem_id"] == "Prob004_mux2"


def test_unknown_config_keys_are_refused():
    with pytest.raises(ValueError, match="max_turn"):
        make("verilog", max_turn=3)


def test_reward_weights_are_normalised_to_sum_to_one():
    shares = VerilogRewards(compile=1, simulate=2, submit=7).shares()
    assert shares == pytest.approx({"compile": 0.1, "simulate": 0.2, "submit": 0.7})
    assert sum(VerilogRewards().shares().values()) == pytest.approx(1.0)


def test_a_submit_weight_of_zero_is_refused():
    with pytest.raises(ValueError):
        VerilogRewards(submit=0)


def test_a_step_penalty_that_could_make_solving_unprofitable_is_refused():
    VerilogEnvConfig(max_turns=10, step_penalty=0.08)  # 9 x 0.08 < 0.8
    with pytest.raises(ValueError, match="step_penalty"):
        VerilogEnvConfig(max_turns=11, step_penalty=0.08)


def test_an_unknown_problem_id_or_an_empty_problem_set_is_refused():
    with pytest.raises(ValueError, match="problem_id 'nope'"):
        VerilogEnv(config=VerilogEnvConfig(problem_id="nope"))
    with pytest.raises(ValueError, match="at least one problem"):
        VerilogEnv([])
