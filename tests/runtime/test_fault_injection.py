"""10,000 verifications, 20 % of them faulted in every way a verifier can fail, through one runtime."""

import random
from collections import Counter

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from ._support import decide

N = 10_000
FAULT_SHARE = 0.20
EXPECTED_KIND = {
    Fault.TIMEOUT: ErrorKind.TIMEOUT,
    Fault.HANG: ErrorKind.TIMEOUT,
    Fault.EXCEPTION: ErrorKind.CRASH,
    Fault.TRANSIENT: ErrorKind.OUTAGE,
    Fault.GARBAGE: ErrorKind.MALFORMED,
    Fault.WRONG_LENGTH: ErrorKind.MALFORMED,
    Fault.INVALID: ErrorKind.OUTAGE,
}


def scenario():
    """Claims and their faults, fixed by a seed; a claim's fault stays with it across retries."""
    rng = random.Random(20240601)
    faults = {i: rng.choice(list(Fault)) for i in range(N) if rng.random() < FAULT_SHARE}
    claims = [Claim(decision=f"d{i % 5}", payload={"i": i}, reasoning=f"completion {i}") for i in range(N)]
    return claims, faults


def test_ten_thousand_verifications_with_twenty_percent_faults(tmp_path):
    claims, faults = scenario()
    assert set(faults.values()) == set(Fault) and 1_800 < len(faults) < 2_200
    verifier = FakeVerifier(decide=decide, fault=lambda claim: faults.get(claim.payload["i"]))
    config = RuntimeConfig(
        batch_size=32, timeout_s=0.05, max_concurrency=512, retries=1, backoff_base_s=0.001, backoff_max_s=0.005,
        # So many poisoned calls in a row would open a breaker; its behaviour is tested on its own.
        breaker_failure_threshold=1_000_000, cache_path=str(tmp_path / "cache.sqlite"),
    )
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync(claims)  # nothing escapes: this returns
        metrics = runtime.last_batch_metrics()
        keys = [runtime.cache_key(claim) for claim in claims]
        memory, sqlite = runtime.memory_cache, runtime.persistent_cache

        assert len(verdicts) == N
        for i, (claim, verdict) in enumerate(zip(claims, verdicts)):
            if i in faults:
                assert verdict.invalid, (i, faults[i], verdict)
                assert verdict.error_kind is EXPECTED_KIND[faults[i]], (i, faults[i], verdict)
                assert verdict.reason
                assert keys[i] not in memory and keys[i] not in sqlite
            else:
                expected = decide(claim)
                assert (verdict.outcome, verdict.decision, verdict.reason) == (
                    expected.outcome, expected.decision, expected.reason), (i, verdict)
                assert keys[i] in memory
        assert len(sqlite) == N - len(faults)

        healthy_outcomes = Counter(decide(claims[i]).outcome.value for i in range(N) if i not in faults)
        assert metrics.claims == N == metrics.certified + metrics.refuted + metrics.invalid
        assert metrics.certified == healthy_outcomes["certified"] and metrics.refuted == healthy_outcomes["refuted"]
        assert metrics.invalid == len(faults)
        assert metrics.invalid_by_kind == dict(Counter(EXPECTED_KIND[f].value for f in faults.values()))
        assert metrics.timeouts > 0 and metrics.retries > 0 and metrics.verifier_calls > N // 32

        # A second pass serves the healthy claims from the cache and re-verifies exactly the faulted ones.
        calls_before = len(verifier.calls)
        again = runtime.verify_many_sync(claims)
        assert [(v.outcome, v.error_kind) for v in again] == [(v.outcome, v.error_kind) for v in verdicts]
        assert runtime.last_batch_metrics().cache_hits_memory == N - len(faults)
        assert {c.payload["i"] for call in verifier.calls[calls_before:] for c in call} == set(faults)
