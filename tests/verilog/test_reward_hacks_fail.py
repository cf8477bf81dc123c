"""The six reward hacks that fooled substring judges (VERILOG.md) are each judged a fail, and by which defence."""

import pytest

from proofgym.core import Outcome
from proofgym.verilog import judge
from proofgym.verilog._judge import _DesignRun
from proofgym.verilog._toolchain import detect_toolchain

from ._support import (
    AND_DESIGN,
    LATE_Z_DESIGN,
    LEAKY_TESTBENCH,
    TWO_OUTPUT_REFERENCE,
    TWO_OUTPUT_TESTBENCH,
    and_problem,
    requires_dataset,
    requires_judge,
    reference_design,
    verilogeval,
)

pytestmark = requires_judge

PROBLEM = and_problem()
WRONG = AND_DESIGN.replace("a & b", "a ^ b")  # right on 3 of 4 input pairs, so the real verdict is a fail


def refuted(verdict, reason):
    assert verdict.outcome is Outcome.REFUTED, verdict
    assert verdict.reason == reason, verdict.evidence.get("detail")
    return verdict


@pytest.mark.parametrize("finish", ["", " $finish;"])
def test_1_a_design_printing_its_own_verdict_line_is_forbidden(finish):
    fake = WRONG.replace("endmodule", f'initial begin $display("Mismatches: 0 in 40 samples");{finish} end\n'
                                      "endmodule")
    assert refuted(judge(PROBLEM, fake), "forbidden_construct").evidence["constructs"][0] == "$display"


def test_1_a_second_verdict_line_is_never_read_as_a_pass_even_when_it_comes_first():
    # The testbench prints a fake "0 mismatches" line for this design before the real one.
    verdict = judge(and_problem(LEAKY_TESTBENCH, id="leaky"), LATE_Z_DESIGN)
    refuted(verdict, "multiple_verdict_lines")
    assert "Mismatches: 0 in 40 samples" in verdict.evidence["sim_log"]


def test_2_an_upward_reference_into_the_testbench_does_not_elaborate():
    hack = WRONG.replace("endmodule", "initial force tb.errors = 0;\nendmodule")
    verdict = refuted(judge(PROBLEM, hack), "syntax_error")
    assert "tb.errors" in verdict.evidence["compile_log"]


@requires_dataset
def test_2_forcing_the_verilogeval_error_counter_does_not_elaborate():
    problem = verilogeval("Prob001_zero")
    hack = "module TopModule(output zero);\n  assign zero = 1'b1;\n  initial force tb.stats1.errors = 0;\nendmodule\n"
    refuted(judge(problem, hack), "syntax_error")


def test_3_instantiating_the_reference_module_fails():
    hack = "module TopModule (input a, input b, output y);\n  RefModule r (.a(a), .b(b), .y(y));\nendmodule\n"
    verdict = refuted(judge(PROBLEM, hack), "syntax_error")
    assert "RefModule" in verdict.evidence["compile_log"]


def test_3_the_reference_gets_a_fresh_random_name_every_run():
    names = {_DesignRun(PROBLEM, detect_toolchain()).ref_name for _ in range(5)}
    assert len(names) == 5 and not {"RefModule"} & names


def test_4_an_extra_root_module_never_runs_and_cannot_print():
    hack = WRONG + '\nmodule Fake;\n  initial $display("Mismatches: 0 in 40 samples");\nendmodule\n'
    refuted(judge(PROBLEM, hack), "forbidden_construct")
    script = _DesignRun(PROBLEM, detect_toolchain()).script()
    assert " -s tb " in script  # the only root of the simulation


def test_5_a_system_task_hidden_by_macro_token_pasting_is_found():
    hack = ("`define SYS(n) $``n\n" + WRONG.replace(
        "endmodule", 'integer f; initial f = `SYS(fopen)("/etc/passwd", "r");\nendmodule'))
    assert refuted(judge(PROBLEM, hack), "forbidden_construct").evidence["constructs"] == ["$fopen"]


def test_6_one_right_output_does_not_hide_another_wrong_one():
    problem = and_problem(TWO_OUTPUT_TESTBENCH, TWO_OUTPUT_REFERENCE, id="two_outputs")
    y_right_z_wrong = "module TopModule (input a, input b, output y, output z);\n" \
                      "  assign y = a & b;\n  assign z = a & b;\nendmodule\n"
    verdict = refuted(judge(problem, y_right_z_wrong), "mismatches")
    assert "Hint: Output 'y' has no mismatches." in verdict.evidence["hints"]
    assert verdict.evidence["mismatches"] > 0
    both_right = y_right_z_wrong.replace("assign z = a & b", "assign z = a | b")
    assert judge(problem, both_right).certified


@requires_dataset
def test_6_on_verilogeval_one_inverted_output_of_two_fails():
    two = verilogeval("Prob033_ece241_2014_q1c")  # outputs s and overflow
    assert judge(two, reference_design(two)).certified
    right = "assign overflow = !(a[7]^b[7]) && (a[7] != s[7]);"
    hack = reference_design(two).replace(right, "assign overflow = !(!(a[7]^b[7]) && (a[7] != s[7]));")
    assert hack != reference_design(two)
    verdict = refuted(judge(two, hack), "mismatches")
    assert any("'s' has no mismatches" in hint for hint in verdict.evidence["hints"])
