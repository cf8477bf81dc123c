"""compile runs a compile-only judge, simulate the full judge, each once per design revision (a full run answers
a later compile; a compile-only run that found the design does not compile answers simulate); submit judges the
files as they are then, through the environment's verification runtime (whose cache answers a design judged
before)."""

import time

import proofgym.verilog._env as env_module
import proofgym.verilog._verifier as verifier_module
from proofgym.verilog import JudgeConfig, VerilogEnv, VerilogEnvConfig, get_problem, interface

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM = get_problem("Prob001_and_gate")


def write(content):
    return {"tool": "write_file", "args": {"path": "top.v", "content": content}}


def counted_judge_runs(monkeypatch) -> list[str]:
    """"compile" for every compile-only judge run the environment makes, "full" for every full one."""
    calls = []
    real_judge = verifier_module.judge
    env_module._close_runtimes()  # a fresh runtime: nothing cached from earlier tests

    def counting_judge(problem, design, *, config, compile_only=False, expected_samples=None):
        calls.append("compile" if compile_only else "full")
        return real_judge(problem, design, config=config, compile_only=compile_only,
                          expected_samples=expected_samples)

    monkeypatch.setattr(verifier_module, "judge", counting_judge)
    return calls


def test_checks_of_one_revision_share_judge_runs_and_submit_judges_the_files_as_they_are(monkeypatch):
    calls = counted_judge_runs(monkeypatch)
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        env.step(write(reference_design(PROBLEM)))
        first = [env.step({"tool": tool}) for tool in ("compile", "compile", "simulate", "simulate", "compile")]
        assert calls == ["compile", "full"]
        assert first[0].info["verdict"]["reason"] == "compiled" and first[-1].info["verdict"]["reason"] == "pass"
        assert [r.observation.text for r in first[:2]] == ["Compile succeeded."] * 2
        env.step(write(reference_design(PROBLEM) + "\n// changed\n"))
        env.step({"tool": "simulate"})
        env.step({"tool": "compile"})
        assert calls == ["compile", "full", "full"]
        submitted = env.step({"tool": "submit"})  # the files simulate judged: the runtime's cached verdict
        assert submitted.info["verdict"]["reason"] == "pass"
    assert calls == ["compile", "full", "full"]
    with VerilogEnv([PROBLEM]) as env:  # a new episode, new files: submit runs the judge
        env.reset(0)
        env.step(write(reference_design(PROBLEM) + "\n// submitted unchecked\n"))
        env.step({"tool": "submit"})
    assert calls == ["compile", "full", "full", "full"]


def test_a_design_that_does_not_compile_is_compiled_once_for_compile_and_simulate(monkeypatch):
    calls = counted_judge_runs(monkeypatch)
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        env.step(write(interface(PROBLEM) + "\n  assign out = a &;\nendmodule\n"))
        compiled = env.step({"tool": "compile"})
        simulated = env.step({"tool": "simulate"})
    assert calls == ["compile"]
    assert compiled.observation.text.startswith("Compile failed (syntax_error)")
    assert simulated.observation.text.startswith("Simulation did not run: the design does not compile")
    assert compiled.reward == simulated.reward == 0.0


def test_a_design_that_hangs_compiles_and_then_times_out_in_simulation(monkeypatch):
    calls = counted_judge_runs(monkeypatch)
    hang = interface(PROBLEM) + "\n  assign out = a & b;\n  integer i;\n  initial forever i = i + 1;\nendmodule\n"
    config = VerilogEnvConfig(judge=JudgeConfig(timeout_s=1.0, cpu_s=1))
    with VerilogEnv([PROBLEM], config=config) as env:
        env.reset(0)
        env.step(write(hang))
        compiled = env.step({"tool": "compile"})  # nothing is simulated: no wait for the hang
        start = time.perf_counter()
        simulated = env.step({"tool": "simulate"})
        assert time.perf_counter() - start >= 1.0  # the simulation ran into the wall-clock limit
    assert calls == ["compile", "full"]
    assert compiled.observation.text == "Compile succeeded." and "compile" in compiled.info["reward_components"]
    assert compiled.info["verdict"]["reason"] == "compiled" and compiled.info["verdict"]["timings"]["judge_s"] < 1.0
    assert simulated.observation.data["passed"] is False and simulated.observation.data["reason"] == "timeout"
    assert simulated.info["reward_components"] == {"step_penalty": 0.0}
