import time

from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier

from ._support import make_claims


def test_queued_call_is_not_charged_for_its_wait():
    verifier = FakeVerifier(latency_s=0.3)
    config = RuntimeConfig(max_concurrency=1, batch_size=1, timeout_s=0.5, retries=0)
    with VerificationRuntime(verifier, config) as runtime:
        start = time.perf_counter()
        verdicts = runtime.verify_many_sync(make_claims(2, start=1))
        elapsed = time.perf_counter() - start
        assert [v.certified for v in verdicts] == [True, True]
        assert elapsed >= 0.55  # the second call waited ~0.3 s for the only slot
        assert all(0.25 <= v.timings["verify_s"] < 0.5 for v in verdicts)
        assert runtime.last_batch_metrics().timeouts == 0
    assert len(verifier.calls) == 2
