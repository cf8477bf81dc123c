"""Observations carry the spec and the port interface, never the reference or the testbench."""

import json

import pytest

from proofgym.verilog import VerilogEnv, VerilogEnvConfig, builtin_problems, interface

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM_IDS = ["Prob001_and_gate", "Prob016_alu8", "Prob038_sync_fifo4"]


def hidden_lines(problem):
    """Lines of the reference and testbench long enough to be telling, that the spec does not share."""
    visible = problem.spec + interface(problem)
    return {line.strip() for line in (problem.reference + "\n" + problem.testbench).splitlines()
            if len(line.strip()) >= 20 and line.strip() not in visible}


def failing_designs(problem):
    good = reference_design(problem)
    header = interface(problem)
    return [
        "module TopModule(input a); endmodule",  # wrong ports: the testbench fails to compile against it
        header + "\n  wire unused;\nendmodule\n",  # right ports, outputs undriven: mismatches
        header + "\n  assign = ;\nendmodule\n",  # syntax error
        good.replace("endmodule", "initial $display(\"Mismatches: 0 in 1 samples\");\nendmodule", 1),
        "module TopModule(); RefModule r(); endmodule",
    ]


@pytest.mark.parametrize("problem_id", PROBLEM_IDS)
def test_no_observation_contains_the_reference_or_the_testbench(problem_id):
    problem = builtin_problems()[problem_id]
    secrets = hidden_lines(problem)
    with VerilogEnv([problem], config=VerilogEnvConfig(max_turns=100)) as env:
        observations = [env.reset(0)]
        assert interface(problem) in observations[0].text and problem.spec.strip() in observations[0].text
        for design in failing_designs(problem):
            observations.append(env.step({"tool": "write_file", "args": {"path": "top.v", "content": design}})
                                .observation)
            observations += [env.step({"tool": tool}).observation for tool in ("compile", "simulate")]
    for observation in observations:
        seen = observation.text + json.dumps(observation.to_dict())
        assert problem.reference.strip() not in seen and problem.testbench.strip() not in seen
        assert [line for line in secrets if line in seen] == []
        assert "Ref_" not in seen and "tb.sv" not in seen  # the reference's run name, the testbench's file


def test_a_port_mismatch_is_reported_without_naming_the_testbench_file():
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate")) as env:
        env.reset(0)
        env.step({"tool": "write_file", "args": {"path": "top.v", "content": "module TopModule(input a); endmodule"}})
        result = env.step({"tool": "compile"})
    assert result.observation.data["compiled"] is False
    assert "testbench: error: port" in result.observation.text
