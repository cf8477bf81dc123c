import os
import time

import pytest

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import ProcessExecutor, RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from ._support import CountingFakeVerifier, SlowWarmUpVerifier, decide_in_worker, fault_from_payload, make_claims
from _bounds import CUT_OFF_S

# Generous enough for a worker's start-up (spawn + imports) on a loaded machine, which the first call pays.
TIMEOUT_S = 1.5


def process_runtime(workers=2, **config):
    verifier = CountingFakeVerifier(decide=decide_in_worker, fault=fault_from_payload)
    config = RuntimeConfig(**{"executor": "process", "workers": workers, "timeout_s": TIMEOUT_S, "retries": 0,
                              "cache_size": 0, **config})
    return VerificationRuntime(verifier, config)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_calls_run_in_worker_processes_and_the_verifier_is_pickled_once_per_worker():
    with process_runtime(workers=1, batch_size=2) as runtime:
        assert isinstance(runtime.executor, ProcessExecutor)
        verdicts = runtime.verify_many_sync(make_claims(10))
        assert [v.decision for v in verdicts] == [c.decision for c in make_claims(10)]
        pids = {v.evidence["pid"] for v in verdicts}
        assert len(pids) == 1 and os.getpid() not in pids
        assert {v.evidence["unpickled"] for v in verdicts} == {1}  # 5 calls, one unpickling
        assert runtime.metrics().verifier_calls == 5
    assert not pid_alive(pids.pop())  # close() stopped the worker


def test_failures_in_the_worker_become_invalid_verdicts():
    claims = [Claim("a", payload={"i": 1, "fault": Fault.EXCEPTION.value}),
              Claim("b", payload={"i": 2, "fault": Fault.TRANSIENT.value}),
              Claim("c", payload={"i": 3, "fault": Fault.GARBAGE.value}),
              Claim("d", payload={"i": 4})]
    config = dict(retries=1, backoff_base_s=0.001, backoff_max_s=0.001, batch_size=4)
    with process_runtime(**config) as runtime:
        verdicts = runtime.verify_many_sync(claims)
    assert [v.error_kind for v in verdicts] == [ErrorKind.CRASH, ErrorKind.OUTAGE, ErrorKind.MALFORMED, None]
    assert "injected crash" in verdicts[0].reason
    assert verdicts[3].certified


def test_hung_worker_is_killed_and_replaced():
    with process_runtime(workers=1) as runtime:
        [warm] = runtime.verify_many_sync(make_claims(1))
        first_pid = warm.evidence["pid"]
        start = time.perf_counter()
        [hung] = runtime.verify_many_sync([Claim("h", payload={"i": 1, "fault": Fault.HANG.value})])
        assert hung.error_kind is ErrorKind.TIMEOUT
        assert time.perf_counter() - start < TIMEOUT_S + CUT_OFF_S  # a hang never ends
        assert not pid_alive(first_pid)
        [after] = runtime.verify_many_sync(make_claims(1, start=2))
        assert after.certified and after.evidence["pid"] != first_pid


def test_worker_that_dies_is_a_crash_and_the_pool_recovers():
    with process_runtime(workers=1) as runtime:
        [dead] = runtime.verify_many_sync([Claim("x", payload={"i": 1, "die": True})])
        assert dead.error_kind is ErrorKind.CRASH and "died (exit code 3)" in dead.reason
        assert runtime.verify_many_sync(make_claims(1, start=5))[0].certified


def test_queueing_for_a_worker_is_not_charged_to_the_timeout():
    verifier = FakeVerifier(latency_s=0.2)
    # Each call has 7x its own time (a loaded machine slows a call, not the point here); ten queued ones take 2 s.
    config = RuntimeConfig(executor="process", workers=1, max_concurrency=16, batch_size=1, timeout_s=1.4,
                           retries=2, backoff_base_s=0.01, backoff_max_s=0.01, cache_size=0)
    with VerificationRuntime(verifier, config) as runtime:
        runtime.verify_many_sync(make_claims(1, start=100))  # start the worker (retried if start-up is slow)
        # Ten 0.2 s calls on one worker take 2 s: the last ones would time out if their wait were timed.
        verdicts = runtime.verify_many_sync(make_claims(10))
        assert all(v.certified for v in verdicts)
        assert runtime.last_batch_metrics().timeouts == 0


def test_unpicklable_verifier_is_a_crash_not_an_exception():
    verifier = FakeVerifier(decide=lambda claim: None)  # a lambda cannot be pickled
    config = RuntimeConfig(executor="process", workers=1, retries=0, breaker_failure_threshold=100)
    with VerificationRuntime(verifier, config) as runtime:
        verdicts = runtime.verify_many_sync(make_claims(2))
    assert all(v.error_kind is ErrorKind.CRASH for v in verdicts)
    assert "pickle" in verdicts[0].reason.lower()


def test_executor_validates_and_closes_idempotently():
    with pytest.raises(ValueError):
        ProcessExecutor(0)
    executor = ProcessExecutor()
    assert executor.max_workers == (os.cpu_count() or 1)
    executor.close()
    executor.close()


def test_a_start_up_slower_than_the_timeout_is_finished_in_the_background_and_the_retry_uses_it():
    """A worker loads (and warms up) the verifier as it starts, outside any call: the first call times out waiting
    for it, the worker goes on starting, and a retry finds it ready, warmed up once."""
    verifier = SlowWarmUpVerifier(warm_up_s=3.0)
    config = RuntimeConfig(executor="process", workers=1, timeout_s=1.0, retries=20, backoff_base_s=0.2,
                           backoff_max_s=0.5, cache_size=0)
    with VerificationRuntime(verifier, config) as runtime:
        first, second = runtime.verify_many_sync(make_claims(2))
        assert first.certified and second.certified
        assert first.evidence["warmed_up"] == second.evidence["warmed_up"] == 1
        assert runtime.metrics().timeouts >= 1  # the first attempt did not wait for the start-up
