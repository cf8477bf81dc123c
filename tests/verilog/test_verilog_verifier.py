"""VerilogVerifier: claims, cache keys, versions, the runtime's process executor, and the ``verilog`` kind."""

import asyncio
import pickle

import pytest

from proofgym.core import Claim, ErrorKind, Outcome
from proofgym.runtime import VerificationRuntime
from proofgym.verifiers import build_verifier, validate_verifier_options
from proofgym.verilog import (
    JUDGE_VERSION,
    JudgeConfig,
    SandboxUnavailable,
    ToolchainError,
    VerilogVerifier,
    canonical_design,
    design_claim,
    recommended_runtime_config,
)

from ._support import AND_DESIGN, OR_DESIGN, SPEC_TO_RTL, and_problem, requires_dataset, requires_judge

PROBLEM = and_problem()


def test_design_claims_carry_the_problem_hash_and_a_canonical_design():
    claim = design_claim(PROBLEM, AND_DESIGN)
    assert claim.payload == {"problem": "and_gate", "problem_hash": PROBLEM.content_hash,
                             "design": canonical_design(AND_DESIGN)}
    changed = and_problem(testbench=PROBLEM.testbench + "\n// revised\n")
    assert design_claim(changed, AND_DESIGN).key() != claim.key()


def test_whitespace_and_line_endings_do_not_change_the_key_but_comments_do():
    messy = "\r\n\r\n" + AND_DESIGN.replace("\n", "   \r\n") + "\t\r\n\r\n"
    assert design_claim(PROBLEM, messy).key() == design_claim(PROBLEM, AND_DESIGN).key()
    commented = AND_DESIGN.replace("endmodule", "// note\nendmodule")
    assert design_claim(PROBLEM, commented).key() != design_claim(PROBLEM, AND_DESIGN).key()


@requires_judge
def test_version_names_the_judge_the_tools_and_the_limits():
    verifier = VerilogVerifier({PROBLEM.id: PROBLEM})
    assert verifier.name == "verilog" and verifier.uses_decision is False
    assert f"judge{JUDGE_VERSION}" in verifier.version and "iverilog 11" in verifier.version
    assert VerilogVerifier({}, config=JudgeConfig(timeout_s=5)).version != verifier.version
    # Where the sandbox comes from is not part of the verdict.
    assert VerilogVerifier({}, config=JudgeConfig(allow_unsandboxed=True)).version == verifier.version


@requires_judge
def test_claims_for_unknown_or_changed_problems_are_invalid_not_refuted():
    verifier = VerilogVerifier({PROBLEM.id: PROBLEM})
    unknown = Claim(payload={"problem": "nope", "problem_hash": "x", "design": AND_DESIGN})
    stale = Claim(payload={"problem": PROBLEM.id, "problem_hash": "old", "design": AND_DESIGN})
    not_text = Claim(payload={"problem": PROBLEM.id, "problem_hash": PROBLEM.content_hash, "design": 42})
    for claim in (unknown, stale, not_text):
        verdict = verifier.verify(claim)
        assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.CRASH


@requires_judge
def test_verify_many_judges_in_order():
    verifier = VerilogVerifier({PROBLEM.id: PROBLEM})
    verdicts = asyncio.run(verifier.verify_many([design_claim(PROBLEM, d) for d in (AND_DESIGN, OR_DESIGN)]))
    assert [v.outcome for v in verdicts] == [Outcome.CERTIFIED, Outcome.REFUTED]


@requires_judge
def test_prepare_runs_the_reference_runs_and_reports_broken_problems():
    broken = and_problem(reference=PROBLEM.reference.replace("a & b", "a &"), id="broken")
    verifier = VerilogVerifier({PROBLEM.id: PROBLEM, broken.id: broken})
    failures = verifier.prepare()
    assert list(failures) == ["broken"] and "reference run" in failures["broken"]
    shipped = pickle.loads(pickle.dumps(verifier))  # what a worker process receives
    verdict = shipped.verify(design_claim(PROBLEM, AND_DESIGN))
    assert verdict.certified and "reference_s" not in verdict.timings


@requires_judge
def test_runs_in_the_runtime_process_executor_with_dedup():
    verifier = VerilogVerifier({PROBLEM.id: PROBLEM})
    claims = [design_claim(PROBLEM, d) for d in (AND_DESIGN, OR_DESIGN, AND_DESIGN + "\n\n", OR_DESIGN)]
    with VerificationRuntime(verifier, recommended_runtime_config(workers=2)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
        metrics = runtime.metrics()
    assert [v.outcome for v in verdicts] == [Outcome.CERTIFIED, Outcome.REFUTED] * 2
    assert metrics.to_dict()["claims_sent"] == 2  # repeats (after canonicalisation) are judged once


def test_recommended_runtime_config():
    config = recommended_runtime_config(JudgeConfig(timeout_s=10), workers=3)
    assert (config.executor, config.workers, config.max_concurrency, config.batch_size) == ("process", 3, 3, 1)
    assert config.timeout_s > 2 * 10


def test_construction_fails_fast_without_the_toolchain_or_the_sandbox():
    with pytest.raises(ToolchainError, match="apt-get install -y iverilog bubblewrap"):
        VerilogVerifier({}, config=JudgeConfig(iverilog="/nonexistent/iverilog"))


@requires_judge
def test_construction_refuses_a_missing_sandbox_unless_explicitly_allowed():
    with pytest.raises(SandboxUnavailable, match="allow_unsandboxed"):
        VerilogVerifier({}, config=JudgeConfig(bwrap="/nonexistent/bwrap"))
    opted_out = JudgeConfig(bwrap="/nonexistent/bwrap", allow_unsandboxed=True)
    assert VerilogVerifier({}, config=opted_out).sandboxed is False


@requires_judge
@requires_dataset
def test_the_verilog_kind_builds_from_run_config_options():
    options = {"problems": str(SPEC_TO_RTL), "timeout_s": 20, "partial_credit": True}
    verifier = build_verifier("verilog", options)
    assert len(verifier.problems) == 156 and verifier.config.partial_credit and verifier.config.timeout_s == 20


def test_the_verilog_kind_rejects_unknown_options():
    with pytest.raises(ValueError, match="unknown key"):
        validate_verifier_options("verilog", {"problems": "builtin", "sandbox": "off"})
    with pytest.raises(ValueError, match="allow_unsandboxed"):
        validate_verifier_options("verilog", {"bwrap": None})
