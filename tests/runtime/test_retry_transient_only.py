import random
import time

import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import invalid_verdict
from proofgym.verifiers import TransientVerifierError

from ._support import FlakyVerifier, make_claims, outage

FAST = dict(backoff_base_s=0.001, backoff_max_s=0.002)


def run(verifier, claims, **config):
    with VerificationRuntime(verifier, RuntimeConfig(**{**FAST, **config})) as runtime:
        return runtime.verify_many_sync(claims), runtime.metrics()


@pytest.mark.parametrize("error", [TransientVerifierError("503"), ConnectionError("reset"), TimeoutError("slow")])
def test_transient_failure_that_clears_is_retried_and_succeeds(error):
    verifier = FlakyVerifier([error])
    [verdict], metrics = run(verifier, make_claims(1), retries=2)
    assert verdict.certified
    assert len(verifier.calls) == 2 and metrics.retries == 1


def test_persistent_transient_failure_gives_up_after_the_retry_budget():
    verifier = FlakyVerifier([TransientVerifierError("503")] * 10)
    [verdict], metrics = run(verifier, make_claims(1), retries=2)
    assert verdict.error_kind is ErrorKind.OUTAGE and "503" in verdict.reason
    assert len(verifier.calls) == 3 and metrics.retries == 2


@pytest.mark.parametrize("error", [RuntimeError("bug"), ValueError("bad"), KeyError("missing")])
def test_non_transient_exception_is_a_crash_and_not_retried(error):
    verifier = FlakyVerifier([error])
    [verdict], metrics = run(verifier, make_claims(1), retries=3)
    assert verdict.error_kind is ErrorKind.CRASH
    assert verdict.reason.startswith(type(error).__name__) and str(error.args[0]) in verdict.reason
    assert len(verifier.calls) == 1 and metrics.retries == 0


def test_malformed_answer_is_not_retried():
    verifier = FlakyVerifier([[{"not": "a verdict"}]])
    [verdict], metrics = run(verifier, make_claims(1), retries=3)
    assert verdict.error_kind is ErrorKind.MALFORMED
    assert len(verifier.calls) == 1


def test_only_transient_invalid_items_are_retried():
    claims = make_claims(3)
    crash = invalid_verdict(ErrorKind.CRASH, "deterministic crash")
    verifier = FlakyVerifier([[outage(), None, crash]])
    verdicts, metrics = run(verifier, claims, retries=2)
    assert [len(call) for call in verifier.calls] == [3, 1]
    assert verifier.calls[1] == [claims[0]]
    assert verdicts[0].certified and verdicts[1].certified
    assert verdicts[2].error_kind is ErrorKind.CRASH  # not transient: kept, not retried
    assert metrics.retries == 1


def test_transient_invalid_item_that_stays_invalid_is_final_after_retries():
    verifier = FlakyVerifier([[outage()]] * 10)
    [verdict], _ = run(verifier, make_claims(1), retries=2)
    assert verdict.error_kind is ErrorKind.OUTAGE
    assert len(verifier.calls) == 3


def test_retries_zero_means_one_attempt():
    verifier = FlakyVerifier([TransientVerifierError("x")])
    [verdict], _ = run(verifier, make_claims(1), retries=0)
    assert verdict.error_kind is ErrorKind.OUTAGE and len(verifier.calls) == 1


def test_backoff_is_exponential_with_bounded_jitter():
    runtime = VerificationRuntime(FlakyVerifier([]), RuntimeConfig(backoff_base_s=0.1, backoff_max_s=0.35))
    runtime._rng = random.Random(0)
    try:
        for attempt, cap in [(1, 0.1), (2, 0.2), (3, 0.35), (10, 0.35)]:
            delays = [runtime._backoff_s(attempt) for _ in range(200)]
            assert all(cap / 2 <= d <= cap for d in delays)
            assert max(delays) - min(delays) > cap / 4  # jittered, not constant
    finally:
        runtime.close()


def test_retry_waits_for_backoff():
    verifier = FlakyVerifier([TransientVerifierError("x"), TransientVerifierError("x")])
    start = time.perf_counter()
    [verdict], _ = run(verifier, [Claim("permit")], retries=2, backoff_base_s=0.1, backoff_max_s=1.0)
    assert verdict.certified
    assert time.perf_counter() - start >= 0.05 + 0.1  # at least half of 0.1 then half of 0.2
