import pickle

import pytest

from proofgym import Claim, ErrorKind, Outcome
from proofgym.config import parse_run_config
from proofgym.domains import get_domain
from proofgym.rules import RuleKernel, load_rulebook
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.domains import RulebookVerifier, verdict_from_report

GRANT = get_domain("grant_eligibility")
FACTS = {"age": 34, "annual_income": 21000, "resident": True, "has_active_grant": False}


def test_certifies_the_kernels_decision_with_the_report_as_evidence():
    verdict = RulebookVerifier(GRANT.rulebook_path).verify(Claim("deny", FACTS))
    assert verdict.outcome is Outcome.CERTIFIED and verdict.decision == "permit"
    assert verdict.evidence["proof_checked"] is True and verdict.evidence["symbolic_trace"]["rules_fired"] > 0
    assert verdict.to_json()  # the evidence is JSON-native


def test_rejected_facts_refute():
    verdict = RulebookVerifier(GRANT.rulebook_path).verify(Claim("permit", {**FACTS, "age": "34", "pet": "cat"}))
    assert verdict.outcome is Outcome.REFUTED and verdict.decision is None
    assert {r.field for r in verdict.rejected_facts} == {"age", "pet"}


def test_a_proof_the_checker_rejects_is_invalid_not_an_answer():
    report = RuleKernel(load_rulebook(GRANT.rulebook_path)).query(FACTS)
    forged = {**report, "proof_checked": False, "status": "indeterminate", "checker_problems": ["forged firing"]}
    verdict = verdict_from_report(forged)
    assert verdict.outcome is Outcome.INVALID and verdict.error_kind is ErrorKind.CRASH


def test_version_follows_the_rulebook_content(tmp_path):
    text = open(GRANT.rulebook_path).read()
    changed = tmp_path / "grant.yaml"
    changed.write_text(text.replace("30000", "30001", 1))
    assert "30000" in text
    assert RulebookVerifier(GRANT.rulebook_path).version != RulebookVerifier(changed).version
    assert RulebookVerifier(GRANT.rulebook_path).version == RulebookVerifier(GRANT.rulebook_path).version


def test_decision_does_not_split_the_cache():
    verifier = RulebookVerifier(GRANT.rulebook_path)
    with VerificationRuntime(verifier, RuntimeConfig()) as runtime:
        runtime.verify_many_sync([Claim("permit", FACTS), Claim("deny", FACTS, reasoning="x")])
        assert runtime.metrics().claims_sent == 1


def test_pickles_for_the_process_executor():
    verifier = RulebookVerifier(GRANT.rulebook_path)
    verifier.verify(Claim("permit", FACTS))
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.verify(Claim("permit", FACTS)).decision == "permit"


def test_process_executor_runs_the_kernel():
    verifier = RulebookVerifier(GRANT.rulebook_path)
    config = RuntimeConfig(executor="process", workers=1, timeout_s=60)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync([Claim(None, {**FACTS, "age": age}) for age in (16, 40)])
    assert [v.decision for v in verdicts] == ["deny", "permit"]


def test_run_config_picks_a_domain_or_a_path():
    by_domain = parse_run_config({"verifier": {"kind": "rulebook", "domain": "grant_eligibility"}})
    by_path = parse_run_config({"verifier": {"kind": "rulebook", "path": str(GRANT.rulebook_path)}})
    assert by_domain.verifier.build().version == by_path.verifier.build().version


def test_run_config_needs_exactly_one_source():
    from proofgym.config import ConfigError

    with pytest.raises(ConfigError, match="exactly one of 'domain'"):
        parse_run_config({"verifier": {"kind": "rulebook"}})
    with pytest.raises(ConfigError, match="exactly one of 'domain'"):
        parse_run_config({"verifier": {"kind": "rulebook", "domain": "loan", "path": "x.yaml"}})
