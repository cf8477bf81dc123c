"""Every outcome and reason of the judge, with the evidence that explains it."""

import json

import pytest

from proofgym.core import ErrorKind, Outcome
from proofgym.verilog import REFUTATION_REASONS, JudgeConfig, ReferenceRunError, judge, reference_samples

from ._support import (
    AND_DESIGN,
    LATE_Z_DESIGN,
    OR_DESIGN,
    SHORT_TESTBENCH,
    SILENT_TESTBENCH,
    and_problem,
    requires_judge,
)

pytestmark = requires_judge

PROBLEM = and_problem()


def test_a_correct_design_is_certified_with_no_decision():
    verdict = judge(PROBLEM, AND_DESIGN)
    assert verdict.outcome is Outcome.CERTIFIED and verdict.decision is None and verdict.reason == "pass"
    assert verdict.evidence["mismatches"] == 0
    assert verdict.evidence["samples"] == verdict.evidence["expected_samples"] == 40
    assert verdict.evidence["sandboxed"] is True
    assert verdict.evidence["toolchain"]["iverilog"]
    assert json.loads(verdict.to_json())["outcome"] == "certified"  # evidence is JSON-native
    assert {"judge_s", "sandbox_s"} <= set(verdict.timings)


def test_a_wrong_design_is_refuted_with_the_counts_and_the_testbench_hints():
    verdict = judge(PROBLEM, OR_DESIGN)
    assert verdict.outcome is Outcome.REFUTED and verdict.reason == "mismatches"
    assert 0 < verdict.evidence["mismatches"] <= verdict.evidence["samples"] == 40
    assert verdict.evidence["hints"] == [f"Hint: Output 'y' has {verdict.evidence['mismatches']} mismatches."]
    assert verdict.components == {}  # no partial credit unless asked for


def test_partial_credit_is_the_matching_share_and_full_on_a_pass():
    config = JudgeConfig(partial_credit=True)
    wrong = judge(PROBLEM, OR_DESIGN, config=config)
    assert wrong.components["graded"] == pytest.approx(1 - wrong.evidence["mismatches"] / 40)
    assert judge(PROBLEM, AND_DESIGN, config=config).components == {"graded": 1.0}
    assert judge(PROBLEM, "module TopModule(", config=config).components == {}  # only complete runs


def test_a_syntax_error_is_refuted_with_the_compiler_message_capped():
    design = AND_DESIGN.replace("assign y = a & b;", "assign y = a & ;\n" + "wire;\n" * 200)
    verdict = judge(PROBLEM, design, config=JudgeConfig(max_log_chars=500))
    assert verdict.reason == "syntax_error"
    assert "design.sv:3" in verdict.evidence["detail"]  # the author's file name and line
    assert len(verdict.evidence["compile_log"]) < 600


def test_a_design_without_topmodule_is_a_syntax_error():
    verdict = judge(PROBLEM, AND_DESIGN.replace("TopModule", "SomethingElse"))
    assert verdict.reason == "syntax_error"


def test_a_design_over_the_size_limit_is_refused_unrun():
    verdict = judge(PROBLEM, AND_DESIGN + "// padding\n" * 100, config=JudgeConfig(max_design_chars=200))
    assert verdict.reason == "resource_limit" and verdict.evidence["limit"] == "design_size"
    assert "sandbox_s" not in verdict.timings


def test_a_run_cut_short_has_the_wrong_sample_count():
    verdict = judge(and_problem(SHORT_TESTBENCH, id="short"), LATE_Z_DESIGN)
    assert verdict.reason == "sample_count_mismatch"
    assert verdict.evidence["mismatches"] == 0 and verdict.evidence["samples"] < verdict.evidence["expected_samples"]


def test_a_run_without_a_verdict_line_fails():
    assert judge(and_problem(SILENT_TESTBENCH, id="silent"), LATE_Z_DESIGN).reason == "no_verdict_line"


def test_a_broken_reference_makes_every_verdict_invalid():
    broken = and_problem(reference=PROBLEM.reference.replace("assign y = a & b;", "assign y = a & ;"), id="broken")
    with pytest.raises(ReferenceRunError, match="broken"):
        reference_samples(broken)
    verdict = judge(broken, AND_DESIGN)
    assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.CRASH
    assert "reference run" in verdict.reason


def test_a_broken_reference_is_run_once_not_once_per_design(reference_runs):
    broken = and_problem(reference=PROBLEM.reference.replace("assign y = a & b;", "assign y = ;"), id="broken-once")
    verdicts = [judge(broken, design) for design in (AND_DESIGN, OR_DESIGN, AND_DESIGN)]
    assert all(v.outcome is Outcome.INVALID for v in verdicts) and len(reference_runs) == 1
    assert all("reference run" in v.reason and "compile" in v.reason for v in verdicts)


def test_reference_sample_counts_are_computed_once_per_problem(reference_runs):
    problem = and_problem(id="counted-once")
    first = judge(problem, AND_DESIGN)
    second = judge(problem, AND_DESIGN)
    assert first.certified and second.certified and len(reference_runs) == 1
    assert first.evidence["reference_run"] == "in launch" and "reference_run" not in second.evidence
    assert first.evidence["expected_samples"] == second.evidence["expected_samples"] == 40
    assert reference_samples(problem) == 40 and len(reference_runs) == 1


def test_a_missing_simulator_is_invalid_and_says_what_to_install():
    verdict = judge(PROBLEM, AND_DESIGN, config=JudgeConfig(iverilog="/nonexistent/iverilog"))
    assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.CRASH
    assert "apt-get install -y iverilog bubblewrap" in verdict.reason


def test_an_unavailable_sandbox_is_invalid_unless_explicitly_allowed():
    verdict = judge(PROBLEM, AND_DESIGN, config=JudgeConfig(bwrap="/nonexistent/bwrap"))
    assert verdict.outcome is Outcome.INVALID and "refusing to run" in verdict.reason
    allowed = judge(PROBLEM, AND_DESIGN, config=JudgeConfig(bwrap="/nonexistent/bwrap", allow_unsandboxed=True))
    assert allowed.certified and allowed.evidence["sandboxed"] is False


def test_no_sandbox_at_all_must_be_explicit():
    with pytest.raises(ValueError, match="allow_unsandboxed"):
        JudgeConfig(bwrap=None)
    assert judge(PROBLEM, AND_DESIGN, config=JudgeConfig(bwrap=None, allow_unsandboxed=True)).certified


@pytest.mark.parametrize("garbage", ["", "\x00\x00", "module TopModule(\ud800);", "`", "$", "\\", "/*", '"',
                                     "module TopModule (input a, input b, output y); endmodule " * 50])
def test_garbage_designs_are_refuted_never_raised(garbage):
    verdict = judge(PROBLEM, garbage)
    assert verdict.outcome is Outcome.REFUTED
    verdict.to_json()


def test_every_refutation_reason_is_documented():
    assert set(REFUTATION_REASONS) == {
        "syntax_error", "forbidden_construct", "mismatches", "timeout", "resource_limit", "no_verdict_line",
        "multiple_verdict_lines", "sample_count_mismatch",
    }


def test_compile_only_stops_before_simulating_and_needs_no_reference(reference_runs):
    problem = and_problem(id="compile-only")
    for design in (AND_DESIGN, OR_DESIGN):  # right or wrong: both compile, neither is simulated
        verdict = judge(problem, design, compile_only=True)
        assert verdict.certified and verdict.reason == "compiled" and verdict.evidence["phase"] == "compile"
        assert "samples" not in verdict.evidence and "sim_log" not in verdict.evidence
    assert reference_runs == []
    assert judge(problem, AND_DESIGN.replace("a & b", "a &"), compile_only=True).reason == "syntax_error"
    assert judge(problem, AND_DESIGN.replace("assign", "initial $finish;\n  assign"),
                 compile_only=True).reason == "forbidden_construct"
