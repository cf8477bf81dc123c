import pytest

from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier

from ._support import make_claims


def sizes(verifier):
    return sorted((len(call) for call in verifier.calls), reverse=True)


def test_misses_go_out_in_chunks_of_batch_size():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=4)) as runtime:
        verdicts = runtime.verify_many_sync(make_claims(10))
    assert sizes(verifier) == [4, 4, 2]
    assert [v.decision for v in verdicts] == [c.decision for c in make_claims(10)]


def test_verifier_max_batch_size_caps_the_chunk():
    verifier = FakeVerifier(max_batch_size=3)
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=32)) as runtime:
        runtime.verify_many_sync(make_claims(7))
    assert sizes(verifier) == [3, 3, 1]


def test_only_cache_misses_are_sent():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=32)) as runtime:
        runtime.verify_many_sync(make_claims(5))
        runtime.verify_many_sync(make_claims(8))
    assert [len(call) for call in verifier.calls] == [5, 3]


def test_bad_max_batch_size_is_rejected():
    with pytest.raises(ValueError, match="max_batch_size"):
        VerificationRuntime(FakeVerifier(max_batch_size=0))
