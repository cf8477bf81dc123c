"""compile and simulate report their own step of one judge run per design revision; submit always re-runs it."""

import time

import proofgym.verilog._env as env_module
from proofgym.verilog import JudgeConfig, VerilogEnv, VerilogEnvConfig, get_problem, interface

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM = get_problem("Prob001_and_gate")


def write(content):
    return {"tool": "write_file", "args": {"path": "top.v", "content": content}}


def test_checks_of_one_revision_share_a_judge_run_and_submit_runs_its_own(monkeypatch):
    calls = []
    real_judge = env_module.judge

    def counting_judge(problem, design, *, config):
        calls.append(design)
        return real_judge(problem, design, config=config)

    monkeypatch.setattr(env_module, "judge", counting_judge)
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        env.step(write(reference_design(PROBLEM)))
        for tool in ("compile", "simulate", "compile", "simulate"):
            env.step({"tool": tool})
        assert len(calls) == 1
        env.step(write(reference_design(PROBLEM) + "\n// changed\n"))
        env.step({"tool": "simulate"})
        assert len(calls) == 2
        env.step({"tool": "submit"})
    assert len(calls) == 3


def test_a_design_that_hangs_compiles_and_then_times_out_in_simulation():
    hang = interface(PROBLEM) + "\n  assign out = a & b;\n  integer i;\n  initial forever i = i + 1;\nendmodule\n"
    config = VerilogEnvConfig(judge=JudgeConfig(timeout_s=1.0, cpu_s=1))
    with VerilogEnv([PROBLEM], config=config) as env:
        env.reset(0)
        env.step(write(hang))
        compiled = env.step({"tool": "compile"})
        start = time.perf_counter()
        simulated = env.step({"tool": "simulate"})
        assert time.perf_counter() - start < 0.5  # the compile's judge run is reused
    assert compiled.observation.text == "Compile succeeded." and "compile" in compiled.info["reward_components"]
    assert simulated.observation.data["passed"] is False and simulated.observation.data["reason"] == "timeout"
    assert simulated.info["reward_components"] == {"step_penalty": 0.0}
