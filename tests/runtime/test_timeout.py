import asyncio
import threading
import time

from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from ._support import fault_from_payload
from _bounds import CUT_OFF_S


def hanging(kind=Fault.HANG):
    return Claim("permit", payload={"i": 1, "fault": kind.value})


def test_hang_is_cut_off_and_becomes_invalid_timeout():
    config = RuntimeConfig(timeout_s=0.1, retries=0)
    with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
        start = time.perf_counter()
        [verdict] = runtime.verify_many_sync([hanging()])
        assert time.perf_counter() - start < CUT_OFF_S  # a hang never ends
        assert verdict.invalid and verdict.error_kind is ErrorKind.TIMEOUT
        assert "timeout_s=0.1" in verdict.reason
        assert verdict.timings["verify_s"] >= 0.1
        assert runtime.metrics().timeouts == 1


def test_timeout_works_from_a_non_main_thread():
    config = RuntimeConfig(timeout_s=0.1, retries=1, backoff_base_s=0.0, backoff_max_s=0.0)
    result = {}

    def worker():
        with VerificationRuntime(FakeVerifier(fault=fault_from_payload), config) as runtime:
            result["verdicts"] = runtime.verify_many_sync([hanging(Fault.TIMEOUT), hanging(Fault.HANG)])
            result["timeouts"] = runtime.metrics().timeouts

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert [v.error_kind for v in result["verdicts"]] == [ErrorKind.TIMEOUT, ErrorKind.TIMEOUT]
    assert result["timeouts"] >= 2


class Stubborn:
    """Ignores the first request to cancel it; honours the second."""

    name, version = "stubborn", "1"

    def __init__(self):
        self.cancellations = 0
        self.stopped = False

    async def verify_many(self, claims):
        for _ in range(1200):  # a minute, unless stopped
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                self.cancellations += 1
                if self.cancellations > 1:
                    self.stopped = True
                    raise
        return []


def test_verifier_that_ignores_cancellation_is_abandoned_then_stopped_on_close(monkeypatch):
    monkeypatch.setattr("proofgym.runtime._runtime._CANCEL_GRACE_S", 0.1)
    verifier = Stubborn()
    with VerificationRuntime(verifier, RuntimeConfig(timeout_s=0.05, retries=0)) as runtime:
        start = time.perf_counter()
        [verdict] = runtime.verify_many_sync([Claim("x")])
        assert verdict.error_kind is ErrorKind.TIMEOUT
        assert time.perf_counter() - start < CUT_OFF_S  # timeout plus grace, not the verifier's minute
        assert verifier.cancellations == 1 and not verifier.stopped
    assert verifier.stopped  # close() asked again
