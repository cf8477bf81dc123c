"""Every field of a session comes back as written; the SQLite file is set up as documented."""

from __future__ import annotations

import sqlite3

import pytest

from proofgym.traces import (
    EnvEvent,
    LMCallEvent,
    SchemaVersionError,
    SessionTrace,
    StepTrace,
    TraceStore,
    TraceStoreError,
)

from ._support import make_session


def edge_sessions() -> list[SessionTrace]:
    """Sessions at the edges: no steps, no outcome, None payloads, huge seed, non-ASCII ids, scalar payloads."""
    return [
        SessionTrace(session_id="empty", run_id="run-1", env_name="e"),
        SessionTrace(session_id="ñame-✓-🚀", run_id="run-1", env_name="vérilog", seed=2**62, policy_id=None,
                     correlation_id=None, started_at=12.5, ended_at=None, status="cancelled", error="user stop",
                     steps=[StepTrace(index=3, observation=None, action=None, reward=-1e300, done=False,
                                      truncated=True, info={}),
                            StepTrace(index=7, observation="plain text", action=["a", 1, 2.5, True, None],
                                      reward=0, env_event=EnvEvent(tool=None)),
                            StepTrace(index=8, observation=42, action={"deep": {"er": [{"x": "y"}]}},
                                      lm_calls=[LMCallEvent(model="m")])],
                     metadata={"unicode": "日本語", "empty": {}, "list": []}),
        SessionTrace(session_id="negative-seed", run_id="run-1", env_name="e", seed=-(2**63), status="timeout"),
    ]


def test_every_field_round_trips_through_sqlite(store):
    sessions = [make_session(i) for i in range(10)] + edge_sessions()
    store.write_sessions(sessions[:6])
    for session in sessions[6:]:
        store.write_session(session)
    for session in sessions:
        got = store.get_session(session.session_id)
        assert got == session
        assert got.to_dict() == session.to_dict()
    assert store.get_session("no-such-session") is None


def test_summaries_carry_the_derived_columns(store):
    session = make_session(3)
    store.write_session(session)
    [summary] = store.list_sessions()
    assert summary.n_steps == len(session.steps) == 4
    assert summary.total_reward == pytest.approx(session.total_reward)
    assert summary.outcome_score == 0.0 and summary.correlation_id == "trace_000001"
    assert summary.to_dict()["session_id"] == "s000003"


def test_a_path_makes_its_folders_and_a_wal_sqlite_file_with_a_schema_version(tmp_path):
    path = tmp_path / "a" / "b" / "traces.db"
    with TraceStore(path) as store:
        assert store.url == f"sqlite:///{path}"
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT name, version FROM schema_info").fetchall() == [("traces", 2)]
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "sessions", "steps", "lm_calls", "env_events", "verifications", "event_rewards",
            "outcome_rewards"} <= tables


def test_reopening_finds_what_was_written(tmp_path):
    path = tmp_path / "traces.db"
    with TraceStore(str(path)) as store:
        store.start_run("run-1", kind="eval")
        store.write_session(make_session(1))
    with TraceStore(f"sqlite:///{path}") as again:
        assert again.get_session("s000001") == make_session(1)
        again.write_session(make_session(2))  # the run is still known
        assert again.count_sessions() == 2


def test_a_store_written_by_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "traces.db"
    TraceStore(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_info SET version = 99")
    with pytest.raises(SchemaVersionError, match="schema version 99, newer .* upgrade proofgym"):
        TraceStore(path)


def test_opening_without_create_never_makes_a_store(tmp_path):
    missing = tmp_path / "nope" / "traces.db"
    with pytest.raises(TraceStoreError, match="does not exist"):
        TraceStore(missing, create=False)
    assert not missing.parent.exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as raw:
        raw.execute("CREATE TABLE unrelated (x)")
    with pytest.raises(TraceStoreError, match="not a proofgym trace store"):
        TraceStore(other, create=False)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(TraceStoreError, match="garbage.db"):
        TraceStore(garbage, create=False)
    with pytest.raises(TraceStoreError, match="is a directory"):
        TraceStore(tmp_path)


def test_unsupported_or_malformed_urls_are_refused():
    with pytest.raises(TraceStoreError, match="unsupported database 'mysql'"):
        TraceStore("mysql://user@localhost/traces")
    with pytest.raises(TraceStoreError, match="not a database URL"):
        TraceStore("::not a url://")


@pytest.mark.parametrize("url", ["postgresql://u:secret@db:5432/traces", "postgres://u:secret@db/traces"])
def test_plain_postgres_urls_use_the_psycopg_driver(url):
    from proofgym.traces._store import _resolve

    sa_url, sqlite, memory = _resolve(url, create=True)
    assert (sa_url.drivername, sqlite, memory) == ("postgresql+psycopg", False, False)
    assert "secret" not in sa_url.render_as_string(hide_password=True)


def test_an_in_memory_store_works_from_threads():
    import threading

    with TraceStore("sqlite://") as store:
        store.start_run("run-1", kind="eval")
        threads = [threading.Thread(target=store.write_session, args=(make_session(i),)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [s.session_id for s in store.iter_sessions()] == [f"s{i:06d}" for i in range(8)]


def test_a_closed_store_says_so(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    store.close()
    store.close()
    with pytest.raises(TraceStoreError, match="is closed"):
        store.list_sessions()
