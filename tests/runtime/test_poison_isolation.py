import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from ._support import decide, fault_from_payload, make_claims


def batch_with(fault, at=13, n=32):
    claims = make_claims(n)
    claims[at] = Claim("p", payload={"i": at, "fault": fault.value})
    return claims


@pytest.mark.parametrize("fault,kind", [
    (Fault.EXCEPTION, ErrorKind.CRASH),
    (Fault.WRONG_LENGTH, ErrorKind.MALFORMED),
    (Fault.TRANSIENT, ErrorKind.OUTAGE),
    (Fault.HANG, ErrorKind.TIMEOUT),
    (Fault.TIMEOUT, ErrorKind.TIMEOUT),
])
def test_one_bad_claim_does_not_sink_its_batch(fault, kind):
    verifier = FakeVerifier(decide=decide, fault=fault_from_payload)
    config = RuntimeConfig(batch_size=32, timeout_s=0.05, retries=1, backoff_base_s=0.001, backoff_max_s=0.001)
    claims = batch_with(fault)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert verdicts[13].invalid and verdicts[13].error_kind is kind
    for i, (claim, verdict) in enumerate(zip(claims, verdicts)):
        if i != 13:
            expected = decide(claim)
            assert (verdict.outcome, verdict.decision, verdict.reason) == (expected.outcome, expected.decision,
                                                                           expected.reason)
    # bisection reached the single bad claim
    assert [claims[13]] in verifier.calls


def test_garbage_item_is_isolated_without_splitting():
    verifier = FakeVerifier(fault=fault_from_payload)
    claims = batch_with(Fault.GARBAGE)
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=32)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert len(verifier.calls) == 1
    assert verdicts[13].error_kind is ErrorKind.MALFORMED and "dict" in verdicts[13].reason
    assert sum(v.invalid for v in verdicts) == 1


def test_wrong_length_answer_is_malformed_and_bisected():
    verifier = FakeVerifier(fault=fault_from_payload)
    claims = batch_with(Fault.WRONG_LENGTH, at=0, n=4)
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=4, retries=0)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert "2 result(s) for 1 claim(s)" in verdicts[0].reason
    assert [len(c) for c in verifier.calls] == [4, 2, 2, 1, 1]
    assert all(v.certified for v in verdicts[1:])


def test_several_bad_claims_in_one_batch():
    verifier = FakeVerifier(decide=decide, fault=fault_from_payload)
    claims = make_claims(32)
    bad = {3: Fault.EXCEPTION, 17: Fault.WRONG_LENGTH, 30: Fault.GARBAGE}
    for i, fault in bad.items():
        claims[i] = Claim("p", payload={"i": i, "fault": fault.value})
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=32, retries=0)) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert {i for i, v in enumerate(verdicts) if v.invalid} == set(bad)
    assert all(verdicts[i].outcome == decide(claims[i]).outcome for i in range(32) if i not in bad)


def test_intermediate_bisection_calls_are_tried_once():
    # A hang costs (retries + 1) timeouts at the chunk and at the single claim, one in between.
    verifier = FakeVerifier(fault=fault_from_payload)
    claims = batch_with(Fault.HANG, at=0, n=8)
    config = RuntimeConfig(batch_size=8, timeout_s=0.05, retries=1, backoff_base_s=0.001, backoff_max_s=0.001)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert verdicts[0].error_kind is ErrorKind.TIMEOUT and all(v.certified for v in verdicts[1:])
    assert sorted((len(c) for c in verifier.calls), reverse=True) == [8, 8, 4, 4, 2, 2, 1, 1, 1]
