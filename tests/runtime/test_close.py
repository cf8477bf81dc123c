import asyncio
import gc
import sqlite3
import threading
import time

import pytest

from _bounds import CUT_OFF_S
from proofgym.core import Claim, ErrorKind
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

from ._support import fault_from_payload, make_claims


def runtime_threads():
    return [t for t in threading.enumerate() if t.name.startswith("proofgym-runtime-")]


def test_close_is_idempotent_and_verify_after_close_raises():
    runtime = VerificationRuntime(FakeVerifier())
    runtime.verify_many_sync(make_claims(1))
    runtime.close()
    runtime.close()
    with pytest.raises(RuntimeError, match="closed"):
        runtime.verify_many_sync(make_claims(1))
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(runtime.verify_many(make_claims(1)))


def test_loop_thread_starts_lazily_and_stops_on_close():
    before = len(runtime_threads())
    with VerificationRuntime(FakeVerifier()) as runtime:
        assert len(runtime_threads()) == before
        runtime.verify_many_sync(make_claims(1))
        assert len(runtime_threads()) == before + 1
    assert len(runtime_threads()) == before


def test_close_turns_calls_in_flight_into_cancelled_verdicts():
    runtime = VerificationRuntime(FakeVerifier(fault=fault_from_payload), RuntimeConfig(timeout_s=60))
    result = {}

    def caller():
        result["verdicts"] = runtime.verify_many_sync(
            [Claim("h", payload={"i": 0, "fault": Fault.HANG.value})] + make_claims(2, start=1))

    thread = threading.Thread(target=caller)
    thread.start()
    time.sleep(0.1)
    start = time.perf_counter()
    runtime.close()
    thread.join(timeout=CUT_OFF_S)
    assert time.perf_counter() - start < CUT_OFF_S  # the hung call would wait for its 60 s timeout
    hung, *healthy = result["verdicts"]
    assert hung.error_kind is ErrorKind.CANCELLED and "closed" in hung.reason
    assert all(v.certified or v.error_kind is ErrorKind.CANCELLED for v in healthy)
    metrics = runtime.last_batch_metrics()
    assert metrics.claims == 3 == metrics.certified + metrics.invalid


def test_close_closes_the_sqlite_cache_it_opened(tmp_path):
    runtime = VerificationRuntime(FakeVerifier(), RuntimeConfig(cache_path=str(tmp_path / "c.sqlite")))
    runtime.verify_many_sync(make_claims(1))
    cache = runtime.persistent_cache
    runtime.close()
    with pytest.raises(sqlite3.ProgrammingError):
        len(cache)


def test_dropped_runtime_stops_its_thread():
    before = len(runtime_threads())
    runtime = VerificationRuntime(FakeVerifier(name="dropped"))
    runtime.verify_many_sync(make_claims(1))
    [thread] = [t for t in runtime_threads() if t.name == "proofgym-runtime-dropped@1"]
    del runtime
    gc.collect()
    thread.join(timeout=2)
    assert not thread.is_alive() and len(runtime_threads()) == before


def test_close_from_an_exit_handler_after_the_finalizer_ran_is_quiet():
    # atexit handlers run last-registered first: the runtime's finalizer (registered when its loop
    # starts) runs before a close() registered earlier, and that close() must not fail.
    import subprocess
    import sys

    code = """
import atexit
from proofgym.runtime import VerificationRuntime
from proofgym.testing import FakeVerifier
from tests.runtime._support import make_claims

runtime = VerificationRuntime(FakeVerifier())
atexit.register(runtime.close)
runtime.verify_many_sync(make_claims(2))
print("verified")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "verified"
    assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr
