"""TraceWriter: batches from many threads, flush commits, a bad session fails alone and is reported, never lost."""

from __future__ import annotations

import math
import threading
import time

import pytest

from proofgym.traces import (
    DuplicateSessionError,
    TraceStore,
    TraceStoreError,
    TraceValidationError,
    TraceWriteError,
    TraceWriter,
    UnknownRunError,
)

from ._support import make_session


def submit_from_threads(writer, n_threads, per_thread):
    def work(k):
        for i in range(k * per_thread, (k + 1) * per_thread):
            writer.submit(make_session(i))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_flush_commits_everything_submitted_from_many_threads(store):
    with TraceWriter(store, max_batch=16) as writer:
        submit_from_threads(writer, 8, 25)
        writer.flush()
        assert store.count_sessions() == 200
        assert writer.sessions_written == 200 and writer.batches_written < 200
    assert list(store.iter_sessions()) == [make_session(i) for i in range(200)]


def test_batches_never_exceed_max_batch(store):
    sizes = []
    write = store._write_encoded
    store._write_encoded = lambda batch: (sizes.append(len(batch)), write(batch))[1]
    with TraceWriter(store, max_batch=4, max_delay_s=0.2) as writer:
        for i in range(40):
            writer.submit(make_session(i))
    assert sum(sizes) == 40 and max(sizes) <= 4 and len(sizes) < 40


def test_a_bad_session_fails_alone_and_is_named(store):
    store.write_session(make_session(2))
    nan_reward = make_session(5)
    nan_reward.steps[0].reward = math.nan
    writer = TraceWriter(store, max_batch=64, max_delay_s=0.2)
    for session in (make_session(1), make_session(2), make_session(3), make_session(4, "no-such-run"),
                    nan_reward, make_session(6)):
        writer.submit(session)  # an invalid session does not raise here, in the rollout loop
    with pytest.raises(TraceWriteError) as error:
        writer.flush()
    failures = dict(error.value.failures)
    assert sorted(failures) == ["s000002", "s000004", "s000005"]
    assert isinstance(failures["s000002"], DuplicateSessionError)
    assert isinstance(failures["s000004"], UnknownRunError)
    assert isinstance(failures["s000005"], TraceValidationError)
    assert "3 session(s) could not be written" in str(error.value) and "steps[0].reward" in str(error.value)
    assert [s.session_id for s in store.list_sessions()] == ["s000001", "s000002", "s000003", "s000006"]
    writer.flush()  # reported once
    writer.close()


def test_close_writes_what_is_queued_and_raises_what_failed(store):
    writer = TraceWriter(store, max_delay_s=30)
    writer.submit(make_session(1))
    writer.submit(make_session(1))
    with pytest.raises(TraceWriteError, match="s000001"):
        writer.close()
    assert store.count_sessions() == 1
    with pytest.raises(TraceStoreError, match="closed"):
        writer.submit(make_session(2))
    writer.close()


def test_flush_does_not_wait_out_the_batching_delay(store):
    with TraceWriter(store, max_delay_s=60) as writer:
        writer.submit(make_session(1))
        started = time.monotonic()
        writer.flush(timeout=30)
        assert time.monotonic() - started < 30
        assert store.get_session("s000001") == make_session(1)


def test_the_session_is_snapshotted_at_submit(store):
    with TraceWriter(store, max_delay_s=0.2) as writer:
        session = make_session(1)
        writer.submit(session)
        session.steps[0].reward = 99.0
        session.metadata["task_id"] = "changed"
    assert store.get_session("s000001") == make_session(1)


def test_database_failures_are_raised_for_every_session(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    store.start_run("run-1", kind="eval")
    writer = TraceWriter(store, max_batch=2)
    store.close()
    for i in range(3):
        writer.submit(make_session(i))
    with pytest.raises(TraceWriteError) as error:
        writer.close()
    assert error.value.session_ids == ["s000000", "s000001", "s000002"]
    assert all("is closed" in str(exc) for _, exc in error.value.failures)


def test_submit_blocks_while_the_queue_is_full(store):
    release = threading.Event()
    write = store._write_encoded

    def slow_write(batch):
        release.wait(10)
        write(batch)
    store._write_encoded = slow_write
    writer = TraceWriter(store, max_batch=1, max_delay_s=0, max_pending=2)
    submitted = []
    thread = threading.Thread(target=lambda: [submitted.append(writer.submit(make_session(i))) for i in range(6)])
    thread.start()
    time.sleep(0.3)
    assert len(submitted) <= 3  # one being written, two queued, the next submit waits
    release.set()
    thread.join(10)
    writer.close()
    assert len(submitted) == 6 and store.count_sessions() == 6


@pytest.mark.parametrize("kwargs", [{"max_batch": 0}, {"max_delay_s": -1}, {"max_batch": 8, "max_pending": 4},
                                    {"max_delay_s": math.nan}])
def test_writer_settings_are_validated(store, kwargs):
    with pytest.raises(ValueError):
        TraceWriter(store, **kwargs)


def test_only_sessions_can_be_submitted(store):
    with TraceWriter(store) as writer, pytest.raises(TypeError, match="takes a SessionTrace"):
        writer.submit({"session_id": "x"})


def test_each_submit_returns_a_future_settled_by_its_own_commit(store):
    with TraceWriter(store, max_delay_s=0) as writer:
        first = writer.submit(make_session(0))
        assert first.result(timeout=10) is None
        assert store.get_session("s000000") is not None  # committed when the future settles
        assert not first.cancel()  # a queued session is written whatever its waiter does
        again = writer.submit(make_session(0))
        with pytest.raises(DuplicateSessionError):
            again.result(timeout=10)
        bad = make_session(1)
        bad.steps[0].reward = math.nan
        with pytest.raises(TraceValidationError):
            writer.submit(bad).result(timeout=0)
        with pytest.raises(TraceWriteError) as failed:  # still raised by flush as well
            writer.flush()
        assert sorted(failed.value.session_ids) == ["s000000", "s000001"]


def test_without_kept_failures_only_the_futures_report_them(store):
    with TraceWriter(store, max_delay_s=0, keep_failures=False) as writer:
        writer.submit(make_session(0)).result(timeout=10)
        duplicate = writer.submit(make_session(0))
        with pytest.raises(DuplicateSessionError):
            duplicate.result(timeout=10)
        writer.flush()  # nothing kept to raise


def test_a_crashed_worker_thread_fails_the_waiting_futures(store, monkeypatch):
    writer = TraceWriter(store, max_delay_s=0)
    release = threading.Event()

    def crash(batch):
        release.wait(5)
        raise SystemExit("simulated crash of the worker thread")

    monkeypatch.setattr(writer, "_write", crash)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the crash is expected
    first, second = writer.submit(make_session(0)), writer.submit(make_session(1))
    release.set()
    for future in (first, second):  # in the crashed batch, or still queued behind it
        assert "worker thread stopped" in str(future.exception(timeout=10))
    with pytest.raises(TraceStoreError, match="worker thread has stopped"):
        writer.flush(timeout=5)
