"""submit runs the full judge on the files as they are at submit time; it never trusts an earlier simulation."""

from proofgym.verilog import VerilogEnv, VerilogEnvConfig

from ._support import reference_design, requires_judge

pytestmark = requires_judge


def test_simulate_a_passing_design_then_break_it_and_submit_fails():
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate")) as env:
        env.reset(0)
        good = reference_design(env.problem)
        env.step({"tool": "write_file", "args": {"path": "top.v", "content": good}})
        assert env.step({"tool": "simulate"}).observation.data["passed"] is True
        env.step({"tool": "write_file", "args": {"path": "top.v", "content": good.replace("a & b", "a | b")}})
        result = env.step({"tool": "submit"})
    assert result.done and result.info["outcome"] == "refuted" and result.info["verdict"]["reason"] == "mismatches"
    assert "submit" not in result.info["reward_components"] and "submit" not in result.info["paid"]
    assert result.observation.text.startswith("Submitted design failed")


def test_adding_a_broken_file_after_a_passing_simulation_fails_the_submit():
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate")) as env:
        env.reset(0)
        env.step({"tool": "write_file", "args": {"path": "a.v", "content": reference_design(env.problem)}})
        assert env.step({"tool": "simulate"}).observation.data["passed"] is True
        env.step({"tool": "write_file", "args": {"path": "b.v", "content": "module broken(;\n"}})
        result = env.step({"tool": "submit"})
    assert result.info["outcome"] == "refuted" and result.info["verdict"]["reason"] == "syntax_error"
    assert "b.v:1" in result.observation.text  # the error points at the agent's own file and line
