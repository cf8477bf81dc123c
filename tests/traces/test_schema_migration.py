"""Schema version 2 (sessions.outcome, sessions.task_id, per-run indexes): new filters and orders, and a
version-1 store migrated in place when it is opened."""

from __future__ import annotations

import sqlite3

import pytest

from proofgym.traces import TraceStore, TraceValidationError
from proofgym.traces._schema import SCHEMA_VERSION, sessions
from ._support import make_session

_NEW_INDEXES = [i.name for i in sessions.indexes if i.name not in
                ("ix_sessions_run_id", "ix_sessions_env_name", "ix_sessions_correlation_id",
                 "ix_sessions_total_reward", "ix_sessions_started_at")]


def _as_version_1(path):
    """What proofgym with schema version 1 left: no outcome / task_id columns, none of the version-2 indexes."""
    with sqlite3.connect(path) as raw:
        for name in _NEW_INDEXES:
            raw.execute(f"DROP INDEX {name}")
        raw.execute("ALTER TABLE sessions DROP COLUMN outcome")
        raw.execute("ALTER TABLE sessions DROP COLUMN task_id")
        raw.execute("UPDATE schema_info SET version = 1")


def test_a_session_is_indexed_by_its_last_verification_outcome_and_task(store):
    store.write_sessions([make_session(i) for i in range(6)])
    summaries = {s.session_id: s for s in store.list_sessions()}
    assert summaries["s000000"].outcome == "refuted" and summaries["s000001"].outcome == "certified"
    assert summaries["s000004"].task_id == "task-4"


def test_listings_filter_by_outcome_seed_task_and_score_and_sort_by_reward(store):
    store.write_sessions([make_session(i) for i in range(30)])
    refuted = store.list_sessions(run_id="run-1", outcome="refuted")
    assert [s.seed for s in refuted] == list(range(0, 30, 3))
    assert store.count_sessions(run_id="run-1", outcome="refuted") == 10
    assert [s.session_id for s in store.list_sessions(seed=7)] == ["s000007"]
    assert [s.session_id for s in store.list_sessions(task_id="task-12")] == ["s000012"]
    assert store.count_sessions(min_score=0.5) == 20 and store.count_sessions(max_score=0.5) == 10
    by_reward = store.list_sessions(order="-reward", limit=5)
    rewards = [s.total_reward for s in store.list_sessions(order="-reward")]
    assert rewards == sorted(rewards, reverse=True) and by_reward[0].total_reward == max(rewards)
    pages = [s.session_id for p in range(3) for s in store.list_sessions(order="reward", limit=10, offset=10 * p)]
    assert sorted(pages) == sorted(s.session_id for s in store.list_sessions())


def test_run_statistics_count_statuses_and_outcomes_and_bound_the_rewards(store):
    store.write_sessions([make_session(i) for i in range(21)])
    stats = store.run_statistics()["run-1"]
    assert stats["by_status"] == {"ok": 18, "error": 3} and stats["n_sessions"] == 21
    assert stats["by_outcome"] == {"refuted": 7, "certified": 14}
    rewards = [s.total_reward for s in store.list_sessions()]
    assert stats["reward"]["min"] == min(rewards) and stats["reward"]["max"] == max(rewards)
    assert stats["reward"]["mean"] == pytest.approx(sum(rewards) / len(rewards))


@pytest.mark.parametrize("bad", [{"order": "wrong"}, {"seed": "seven"}, {"min_score": "high"}, {"outcome": 3}])
def test_a_bad_listing_argument_is_named(store, bad):
    with pytest.raises(TraceValidationError, match=next(iter(bad))):
        store.list_sessions(**bad)


def test_a_version_1_store_is_migrated_in_place_when_opened(tmp_path):
    path = tmp_path / "old.db"
    with TraceStore(path) as store:
        store.start_run("run-1", kind="eval")
        store.write_sessions([make_session(i) for i in range(12)])
        before = {s.session_id: (s.outcome, s.task_id) for s in store.list_sessions()}
    _as_version_1(path)
    with sqlite3.connect(path) as raw:
        assert "outcome" not in [row[1] for row in raw.execute("PRAGMA table_info(sessions)")]
    with TraceStore(path, create=False) as store:  # a reader opening an old store migrates it too
        after = {s.session_id: (s.outcome, s.task_id) for s in store.list_sessions()}
        assert store.count_sessions(outcome="certified") == 8
        assert store.get_session("s000003").to_dict() == make_session(3).to_dict()
        store.write_session(make_session(12))  # and it takes new sessions
    assert after == before and before["s000000"] == ("refuted", "task-0")
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM schema_info").fetchone() == (SCHEMA_VERSION,)
        indexes = {row[1] for row in raw.execute("PRAGMA index_list(sessions)")}
        assert set(_NEW_INDEXES) <= indexes
    TraceStore(path).close()  # opening a migrated store again changes nothing
