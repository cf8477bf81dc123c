"""When the judge cannot run, nothing is paid, the agent is told it is not its fault, and submit is marked invalid."""

from proofgym.verilog import JudgeConfig, VerilogEnv, VerilogEnvConfig, get_problem

from ._support import reference_design

PROBLEM = get_problem("Prob001_and_gate")
BROKEN_TOOLCHAIN = VerilogEnvConfig(judge=JudgeConfig(iverilog="/nonexistent/iverilog"))


def test_checks_with_a_broken_toolchain_pay_nothing_and_the_episode_goes_on():
    with VerilogEnv([PROBLEM], config=BROKEN_TOOLCHAIN) as env:
        env.reset(0)
        env.step({"tool": "write_file", "args": {"path": "top.v", "content": reference_design(PROBLEM)}})
        for tool in ("compile", "simulate"):
            result = env.step({"tool": tool})
            assert result.info["outcome"] == "invalid" and result.reward == 0.0 and not result.done
            assert "not a problem with your design" in result.observation.text
        result = env.step({"tool": "submit"})
    assert result.done and result.reward == 0.0 and result.info["outcome"] == "invalid"
    assert result.info["paid"] == []
    assert result.info["reason"] == result.info["verdict"]["reason"]
    assert result.info["reason"].startswith("iverilog not installed; ")
