from proofgym.core import Claim
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier

from ._support import make_claims


def test_identical_claims_in_one_call_are_verified_once():
    verifier = FakeVerifier()
    claims = make_claims(3) * 4
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
        assert verifier.claims_verified == 3
        assert [v.decision for v in verdicts] == [c.decision for c in claims]
        assert all(v.certified for v in verdicts)
        assert runtime.last_batch_metrics().dedup_saves == 9


def test_reasoning_only_differences_share_one_verification():
    verifier = FakeVerifier()
    claims = [Claim("permit", {"x": 1}, reasoning=f"take {i}") for i in range(8)]
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert verifier.claims_verified == 1
    assert len(verdicts) == 8 and all(v.certified and v.decision == "permit" for v in verdicts)


def test_decision_only_differences_share_when_verifier_ignores_decision():
    verifier = FakeVerifier(uses_decision=False)
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as runtime:
        runtime.verify_many_sync([Claim("permit", {"x": 1}), Claim("deny", {"x": 1})])
    assert verifier.claims_verified == 1


def test_different_claims_are_not_merged():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(cache_size=0)) as runtime:
        verdicts = runtime.verify_many_sync([Claim("permit", {"x": 1}), Claim("deny", {"x": 1})])
    assert verifier.claims_verified == 2
    assert [v.decision for v in verdicts] == ["permit", "deny"]
