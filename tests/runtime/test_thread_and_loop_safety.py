import asyncio
import threading
import time

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, certified

from ._support import InFlightVerifier, make_claims
from _bounds import CUT_OFF_S


def test_all_work_runs_on_one_private_daemon_thread():
    verifier = InFlightVerifier(latency_s=0.001)
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=1)) as runtime:
        runtime.verify_many_sync(make_claims(5))
        asyncio.run(runtime.verify_many(make_claims(5, start=5)))
        [name] = verifier.threads
        [thread] = [t for t in threading.enumerate() if t.name == name]
        assert thread is not threading.main_thread() and thread.daemon
        assert name.startswith("proofgym-runtime-")
    assert not thread.is_alive()


def test_awaitable_from_several_event_loops_at_once():
    runtime = VerificationRuntime(InFlightVerifier(latency_s=0.02), RuntimeConfig(batch_size=2))
    results, errors = {}, []

    def in_its_own_loop(t):
        try:
            results[t] = asyncio.run(runtime.verify_many(make_claims(10, start=t * 10)))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with runtime:
        threads = [threading.Thread(target=in_its_own_loop, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        main = asyncio.run(runtime.verify_many(make_claims(10, start=40)))
        for thread in threads:
            thread.join()
    assert errors == []
    assert all(v.certified for v in main)
    for t, verdicts in results.items():
        assert [v.decision for v in verdicts] == [c.decision for c in make_claims(10, start=t * 10)]


def test_sync_call_from_many_threads_with_overlapping_claims():
    verifier = FakeVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(batch_size=8)) as runtime:
        outputs = [None] * 8

        def work(t):
            outputs[t] = runtime.verify_many_sync(make_claims(40, start=t * 5))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for t, verdicts in enumerate(outputs):
            assert [v.decision for v in verdicts] == [c.decision for c in make_claims(40, start=t * 5)]
        metrics = runtime.metrics()
        assert metrics.claims == 320 == metrics.certified and metrics.batches == 8


def test_sync_call_from_a_thread_running_an_event_loop_blocks_and_works():
    with VerificationRuntime(FakeVerifier(latency_s=0.01)) as runtime:

        async def caller():
            return runtime.verify_many_sync(make_claims(3))

        assert all(v.certified for v in asyncio.run(caller()))


class SelfCallingVerifier:
    """A verifier that (wrongly) uses its own runtime, synchronously or asynchronously."""

    name, version = "self-calling", "1"
    runtime: VerificationRuntime

    async def verify_many(self, claims):
        out = []
        for claim in claims:
            if claim.decision == "sync":
                self.runtime.verify_many_sync([Claim("inner")])
            elif claim.decision == "close":
                self.runtime.close()
            elif claim.decision == "await":
                [inner] = await self.runtime.verify_many([Claim("inner")])
                assert inner.certified
            out.append(certified(claim.decision))
        return out


def test_sync_call_on_the_runtime_thread_raises_instead_of_deadlocking():
    verifier = SelfCallingVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(timeout_s=120, retries=0)) as runtime:
        verifier.runtime = runtime
        start = time.perf_counter()
        [sync_call, close_call] = runtime.verify_many_sync([Claim("sync"), Claim("close")])
        assert time.perf_counter() - start < CUT_OFF_S  # a deadlock would last until the 120 s timeout
        assert sync_call.error_kind is ErrorKind.CRASH and "own event-loop thread" in sync_call.reason
        assert close_call.error_kind is ErrorKind.CRASH and "own event-loop thread" in close_call.reason


def test_awaiting_the_runtime_from_its_own_loop_works():
    verifier = SelfCallingVerifier()
    with VerificationRuntime(verifier, RuntimeConfig(max_concurrency=2, timeout_s=5)) as runtime:
        verifier.runtime = runtime
        [outer] = runtime.verify_many_sync([Claim("await")])
        assert outer.certified


def test_caller_cancellation_cancels_the_verifier_call():
    verifier = InFlightVerifier(latency_s=30)
    with VerificationRuntime(verifier, RuntimeConfig(timeout_s=60)) as runtime:

        async def impatient():
            await asyncio.wait_for(runtime.verify_many(make_claims(1)), timeout=0.1)

        start = time.perf_counter()
        try:
            asyncio.run(impatient())
        except TimeoutError:
            pass
        else:  # pragma: no cover
            raise AssertionError("expected the caller's timeout")
        deadline = time.perf_counter() + CUT_OFF_S
        while verifier.in_flight and time.perf_counter() < deadline:
            time.sleep(0.01)
        assert verifier.in_flight == 0 and time.perf_counter() - start < CUT_OFF_S
        verifier.latency_s = 0
        assert runtime.verify_many_sync(make_claims(1))[0].certified
