import asyncio
import contextlib
import time
from collections import Counter

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import BreakerState, CircuitBreaker, RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault, certified, refuted
from proofgym.verifiers import TransientVerifierError

from ._support import FlakyVerifier, fault_from_payload, make_claims


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_opens_after_threshold_consecutive_failures():
    breaker = CircuitBreaker(failure_threshold=3, reset_after_s=10, clock=FakeClock())
    for _ in range(2):
        assert breaker.allow()
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED
    breaker.record_success()  # resets the count
    for _ in range(3):
        breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.allow()


def test_half_open_admits_one_trial_then_closes_or_reopens():
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=1, reset_after_s=10, clock=clock)
    breaker.record_failure()
    clock.now += 9.9
    assert not breaker.allow()
    clock.now += 0.1
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.allow() and not breaker.allow()  # one trial only
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN
    clock.now += 10
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED and breaker.allow() and breaker.allow()


def test_released_trial_lets_another_through():
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=1, reset_after_s=1, clock=clock)
    breaker.record_failure()
    clock.now += 1
    assert breaker.allow() and not breaker.allow()
    breaker.release_trial()
    assert breaker.allow()


def test_success_from_a_call_admitted_before_opening_does_not_close_it():
    breaker = CircuitBreaker(failure_threshold=1, reset_after_s=10, clock=FakeClock())
    breaker.record_failure()
    breaker.record_success()
    assert breaker.state is BreakerState.OPEN


def test_runtime_stops_calling_a_failing_backend_and_recovers():
    clock = FakeClock()
    verifier = FlakyVerifier([RuntimeError("down")] * 2)
    config = RuntimeConfig(retries=0, breaker_failure_threshold=2, breaker_reset_after_s=30)
    with VerificationRuntime(verifier, config, clock=clock) as runtime:
        for claim in make_claims(2):
            assert runtime.verify_many_sync([claim])[0].error_kind is ErrorKind.CRASH
        assert runtime.breaker.state is BreakerState.OPEN
        [rejected] = runtime.verify_many_sync(make_claims(1, start=2))
        assert rejected.error_kind is ErrorKind.BREAKER_OPEN and "circuit breaker" in rejected.reason
        assert len(verifier.calls) == 2  # the verifier was not called
        assert runtime.metrics().breaker_state == "open"
        clock.now += 30
        assert runtime.verify_many_sync(make_claims(1, start=3))[0].certified  # the trial call
        assert runtime.breaker.state is BreakerState.CLOSED
        assert all(v.certified for v in runtime.verify_many_sync(make_claims(3, start=4)))


def test_failed_trial_reopens():
    clock = FakeClock()
    verifier = FlakyVerifier([RuntimeError("down")] * 3)
    config = RuntimeConfig(retries=0, breaker_failure_threshold=1, breaker_reset_after_s=5)
    with VerificationRuntime(verifier, config, clock=clock) as runtime:
        runtime.verify_many_sync(make_claims(1))
        clock.now += 5
        assert runtime.verify_many_sync(make_claims(1, start=1))[0].error_kind is ErrorKind.CRASH
        assert runtime.breaker.state is BreakerState.OPEN
        assert runtime.verify_many_sync(make_claims(1, start=2))[0].error_kind is ErrorKind.BREAKER_OPEN


def test_refuted_verdicts_are_not_failures():
    verifier = FakeVerifier(decide=lambda claim: refuted())
    with VerificationRuntime(verifier, RuntimeConfig(breaker_failure_threshold=1)) as runtime:
        for i in range(5):
            assert runtime.verify_many_sync(make_claims(1, start=i))[0].outcome.value == "refuted"
        assert runtime.breaker.state is BreakerState.CLOSED


def test_one_poisoned_claim_among_healthy_ones_never_opens_the_breaker():
    # The poisoned claim leads its batch, so the calls that fail on its account come first: only the
    # final single-claim call may count as a failure.
    config = RuntimeConfig(retries=0, breaker_failure_threshold=2, batch_size=32)
    with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
        for batch in range(30):
            kind = [Fault.EXCEPTION, Fault.GARBAGE, Fault.WRONG_LENGTH][batch % 3]
            poisoned = Claim("p", payload={"i": -batch, "fault": kind.value})
            verdicts = runtime.verify_many_sync([poisoned] + make_claims(16, start=batch * 16))
            assert verdicts[0].invalid and all(not v.invalid for v in verdicts[1:])
            assert runtime.breaker.state is BreakerState.CLOSED


def test_consecutive_poisoned_calls_alone_do_open_it():
    config = RuntimeConfig(retries=0, breaker_failure_threshold=2)
    with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
        for i in range(2):
            runtime.verify_many_sync([Claim("p", payload={"i": i, "fault": Fault.GARBAGE.value})])
        assert runtime.breaker.state is BreakerState.OPEN


class ByDecision:
    """Raises, stalls or certifies according to the claim's decision; counts calls per decision."""

    name, version = "by-decision", "1"

    def __init__(self):
        self.calls = Counter()

    async def verify_many(self, claims):
        what = claims[0].decision
        self.calls[what] += 1
        if what == "transient":
            raise TransientVerifierError("flaky")
        if what == "crash":
            raise RuntimeError("down")
        if what == "slow":
            await asyncio.sleep(30)
        return [certified(c.decision) for c in claims]


def test_retries_stop_once_the_breaker_opens():
    verifier = ByDecision()
    config = RuntimeConfig(batch_size=1, retries=3, backoff_base_s=0.1, backoff_max_s=0.1, breaker_failure_threshold=2)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync([Claim("transient"), Claim("crash", {"n": 1}), Claim("crash", {"n": 2})])
    assert verdicts[0].error_kind is ErrorKind.OUTAGE  # its own last failure, not a breaker rejection
    assert verifier.calls["transient"] <= 2  # not 4: the breaker opened during its first backoff


def test_cancelled_trial_call_lets_the_next_call_be_the_trial():
    clock = FakeClock()
    verifier = ByDecision()
    config = RuntimeConfig(retries=0, breaker_failure_threshold=1, breaker_reset_after_s=10, timeout_s=60)
    with VerificationRuntime(verifier, config, clock=clock) as runtime:
        runtime.verify_many_sync([Claim("crash")])
        clock.now += 10

        async def give_up_on_trial():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(runtime.verify_many([Claim("slow")]), timeout=0.1)

        asyncio.run(give_up_on_trial())
        assert verifier.calls["slow"] == 1
        time.sleep(0.2)  # let the runtime's loop finish cancelling the trial
        assert runtime.verify_many_sync([Claim("fine")])[0].certified
        assert runtime.breaker.state is BreakerState.CLOSED
