"""The same store on Postgres (a server from $PROOFGYM_TEST_POSTGRES_URL or a throwaway local cluster)."""

from __future__ import annotations

import threading

import pytest

from proofgym.traces import DuplicateSessionError, TraceStore, TraceWriteError, TraceWriter

from ._support import make_session


def test_sessions_round_trip_filter_and_resolve_by_correlation_id_on_postgres(postgres_url):
    sessions = [make_session(i) for i in range(8)]
    with TraceStore(postgres_url) as store:
        assert store.url.startswith("postgresql+psycopg://")
        store.start_run("run-1", kind="eval", config={"seeds": [1, 2], "model": "tiny"})
        store.write_sessions(sessions[:5])
        for session in sessions[5:]:
            store.write_session(session)
        assert [store.get_session(s.session_id) for s in sessions] == sessions
        high = [s.session_id for s in sessions if s.total_reward >= 1.0]
        assert [s.session_id for s in store.list_sessions(min_reward=1.0)] == high
        assert store.find_by_correlation_id("trace_000001") == sessions[2:4]
        assert [s.session_id for s in store.iter_sessions(status="error", limit=5)] == ["s000000", "s000007"]
        [run] = store.list_runs()
        assert run.n_sessions == 8 and run.config == {"seeds": [1, 2], "model": "tiny"}
    with TraceStore(postgres_url, create=False) as reopened:  # the schema is found, not created again
        assert reopened.count_sessions() == 8


def test_a_failed_batch_leaves_nothing_and_the_writer_keeps_the_rest_on_postgres(postgres_url):
    with TraceStore(postgres_url) as store:
        store.start_run("run-1", kind="eval")
        store.write_session(make_session(0))
        with pytest.raises(DuplicateSessionError):
            store.write_sessions([make_session(1), make_session(0)])
        assert store.get_session("s000001") is None
        with TraceWriter(store, max_batch=8) as writer:
            threads = [threading.Thread(target=lambda k=k: [writer.submit(make_session(i)) for i in
                                                              range(1 + k * 10, 11 + k * 10)]) for k in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            writer.submit(make_session(5))  # a duplicate of one the threads sent
            with pytest.raises(TraceWriteError) as failed:
                writer.flush()
        assert failed.value.session_ids == ["s000005"]
        assert store.count_sessions() == 41
