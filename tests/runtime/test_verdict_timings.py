from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified

from ._support import fault_from_payload


def test_verdicts_get_verify_s_and_keep_their_own_timings():
    verifier = FakeVerifier(decide=lambda c: certified(c.decision, timings={"solver_s": 0.25}), latency_s=0.02)
    with VerificationRuntime(verifier) as runtime:
        [verdict] = runtime.verify_many_sync([Claim("permit")])
    assert verdict.timings["solver_s"] == 0.25
    assert 0.02 <= verdict.timings["verify_s"] < 1.0
    assert verdict.verifier == "fake@1"


def test_verifier_label_is_kept_when_the_verifier_sets_one():
    verifier = FakeVerifier(decide=lambda c: certified(c.decision, verifier="custom"))
    with VerificationRuntime(verifier) as runtime:
        assert runtime.verify_many_sync([Claim("permit")])[0].verifier == "custom"


def test_runtime_made_invalid_verdicts_carry_timings_and_label():
    config = RuntimeConfig(timeout_s=0.05, retries=0)
    with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
        [verdict] = runtime.verify_many_sync([Claim("x", payload={"fault": Fault.HANG.value})])
    assert verdict.error_kind is ErrorKind.TIMEOUT and verdict.verifier == "fake@1"
    assert verdict.timings["verify_s"] >= 0.05


def test_cache_hit_returns_the_stored_verdict():
    with VerificationRuntime(FakeVerifier(latency_s=0.02)) as runtime:
        [first] = runtime.verify_many_sync([Claim("permit")])
        [again] = runtime.verify_many_sync([Claim("permit", reasoning="other")])
    assert again == first and again.timings["verify_s"] == first.timings["verify_s"]
