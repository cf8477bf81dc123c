import time

from proofgym.runtime import RuntimeConfig, VerificationRuntime

from ._support import InFlightVerifier, make_claims


def test_at_most_max_concurrency_calls_in_flight():
    verifier = InFlightVerifier(latency_s=0.02)
    with VerificationRuntime(verifier, RuntimeConfig(max_concurrency=3, batch_size=1)) as runtime:
        runtime.verify_many_sync(make_claims(12))
    assert verifier.max_in_flight == 3


def test_calls_overlap_up_to_the_bound():
    verifier = InFlightVerifier(latency_s=1.0)
    with VerificationRuntime(verifier, RuntimeConfig(max_concurrency=8, batch_size=1)) as runtime:
        start = time.perf_counter()
        verdicts = runtime.verify_many_sync(make_claims(8))
        elapsed = time.perf_counter() - start
    assert all(v.certified for v in verdicts)
    assert elapsed < 4.0  # serially it would take 8 s
    assert verifier.max_in_flight == 8
