"""Read API: filters by run / env / reward / status, paging, iteration, correlation ids, run summaries."""

from __future__ import annotations

import pytest

from ._support import make_session


@pytest.fixture
def filled(store):
    store.start_run("run-2", kind="train", env_name="loan", config={"lr": 1e-5})
    sessions = [make_session(i) for i in range(12)] + [make_session(i, "run-2", env_name="loan")
                                                         for i in range(12, 20)]
    store.write_sessions(sessions)
    return store, sessions


def ids(items):
    return [item.session_id for item in items]


def test_each_filter_and_their_combination(filled):
    store, sessions = filled
    assert ids(store.list_sessions()) == ids(sessions)
    assert ids(store.list_sessions(run_id="run-2")) == ids(sessions[12:])
    assert ids(store.list_sessions(env_name="grant_eligibility")) == ids(sessions[:12])
    assert ids(store.list_sessions(status="error")) == ["s000000", "s000007", "s000014"]
    rewards = sorted({s.total_reward for s in sessions})
    low, high = rewards[3], rewards[-4]
    assert ids(store.list_sessions(min_reward=low, max_reward=high)) == [
        s.session_id for s in sessions if low <= s.total_reward <= high]  # bounds are inclusive
    assert ids(store.list_sessions(run_id="run-2", min_reward=high)) == [
        s.session_id for s in sessions[12:] if s.total_reward >= high]
    assert store.count_sessions(run_id="run-1", status="ok") == 10
    assert store.list_sessions(run_id="nope") == [] and store.list_sessions(min_reward=5, max_reward=1) == []


def test_limit_and_offset_page_in_start_order(filled):
    store, sessions = filled
    assert ids(store.list_sessions(limit=5)) == ids(sessions[:5])
    assert ids(store.list_sessions(limit=5, offset=17)) == ids(sessions[17:])
    assert store.list_sessions(limit=0) == []


@pytest.mark.parametrize("chunk", [1, 3, 200])
def test_iteration_yields_whole_sessions_across_chunks(filled, chunk):
    store, sessions = filled
    store.read_chunk = chunk
    assert list(store.iter_sessions()) == sessions
    assert list(store.iter_sessions(run_id="run-1", offset=2, limit=7)) == sessions[2:9]
    assert list(store.iter_sessions(env_name="loan", offset=6)) == sessions[18:]
    assert list(store.iter_sessions(limit=0)) == []


def test_sessions_with_equal_start_times_are_neither_lost_nor_repeated(store):
    sessions = [make_session(i) for i in range(7)]
    for session in sessions:
        session.started_at = 5.0
    store.write_sessions(sessions[::-1])
    store.read_chunk = 2
    assert list(store.iter_sessions()) == sessions  # ties broken by session id


def test_a_correlation_id_resolves_to_its_sessions(filled):
    store, sessions = filled
    assert store.find_by_correlation_id("trace_000003") == sessions[6:8]
    assert store.find_by_correlation_id("trace_999999") == []


def test_runs_list_their_sessions_and_how_they_ended(filled):
    store, sessions = filled
    store.finish_run("run-1", status="ok", summary={"mean_reward": 1.5, "per_seed": [1, 2]})
    first, second = store.list_runs()
    assert (first.run_id, first.kind, first.env_name, first.status) == ("run-1", "eval", "grant_eligibility", "ok")
    assert first.summary == {"mean_reward": 1.5, "per_seed": [1, 2]} and first.ended_at >= first.started_at
    assert first.n_sessions == 12
    assert first.mean_reward == pytest.approx(sum(s.total_reward for s in sessions[:12]) / 12)
    assert (second.status, second.config, second.n_sessions, second.ended_at) == ("running", {"lr": 1e-5}, 8, None)
    empty = store.start_run(kind="eval")
    assert len(empty) == 32 and store.list_runs()[-1].to_dict()["n_sessions"] == 0
    assert store.list_runs()[-1].mean_reward is None
