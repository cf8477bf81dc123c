"""Export to JSONL (one SessionTrace.to_dict() per line) and to a Hugging Face Dataset of flat rows."""

from __future__ import annotations

import json

import pytest

from proofgym.traces import LMCallEvent, SessionTrace, StepTrace
from proofgym.traces._dataset import COLUMNS, session_row

from ._support import make_session


@pytest.fixture
def filled(store):
    sessions = [make_session(i) for i in range(9)]
    store.write_sessions(sessions)
    return store, sessions


def test_jsonl_has_one_session_per_line_and_honours_filters(filled, tmp_path):
    store, sessions = filled
    out = tmp_path / "deep" / "export.jsonl"
    assert store.export_jsonl(out) == 9
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [SessionTrace.from_dict(json.loads(line)) for line in lines] == sessions
    assert store.export_jsonl(out, status="error", limit=1) == 1
    assert json.loads(out.read_text())["session_id"] == "s000000"
    assert sorted(p.name for p in out.parent.iterdir()) == ["export.jsonl"]  # no partial file left behind


def test_a_failed_export_leaves_no_file(filled, tmp_path):
    store, _ = filled
    out = tmp_path / "exports" / "export.jsonl"
    with pytest.raises(ValueError):
        store.export_jsonl(out, limit=-1)
    assert list(out.parent.iterdir()) == []


def test_dataset_rows_are_flat_and_carry_the_conversation(filled):
    store, sessions = filled
    dataset = store.to_dataset()
    assert dataset.column_names == list(COLUMNS) and len(dataset) == 9
    row = dataset[4]
    session = sessions[4]  # five steps; step 0 has a failed call before the answered one
    assert (row["session_id"], row["run_id"], row["seed"], row["status"]) == ("s000004", "run-1", 4, "ok")
    assert row["reward"] == pytest.approx(session.total_reward) and row["outcome_score"] == 1.0
    assert (row["n_steps"], row["n_lm_calls"]) == (5, 6)
    assert row["prompt"] == "question 4 turn 4" and row["completion"] == "answer 4.4"
    assert row["messages"] == [{"role": "system", "content": "be brief"},
                               {"role": "user", "content": "question 4 turn 4"},
                               {"role": "assistant", "content": "answer 4.4"}]
    assert row["prompt_tokens"] == sum(20 + k for k in range(5)) and row["completion_tokens"] == 5 * (5 + 4)
    assert SessionTrace.from_dict(json.loads(row["session_json"])) == session
    high = store.to_dataset(min_reward=2.0)
    assert high["session_id"] == [s.session_id for s in sessions if s.total_reward >= 2.0]


def test_an_empty_dataset_keeps_its_columns(store):
    dataset = store.to_dataset()
    assert len(dataset) == 0 and dataset.column_names == list(COLUMNS)


@pytest.mark.parametrize(("request_", "response", "prompt", "completion", "messages"), [
    ("plain prompt", "plain reply", "plain prompt", "plain reply", []),
    ({"prompt": "p"}, {"choices": [{"text": "c"}]}, "p", "c", []),
    ([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
     {"message": {"content": "r"}}, "ab", "r", [{"role": "user", "content": "ab"}, {"role": "assistant",
                                                                                    "content": "r"}]),
    ({"messages": "not a list"}, {"content": "r"}, None, "r", []),
    ({"unknown": 1}, {"unknown": 2}, None, None, []),
])
def test_prompt_and_completion_are_read_from_common_request_shapes(request_, response, prompt, completion,
                                                                   messages):
    session = SessionTrace("s", "r", "e", steps=[StepTrace(0, lm_calls=[LMCallEvent("m", request_, response)])])
    row = session_row(session)
    assert (row["prompt"], row["completion"], row["messages"]) == (prompt, completion, messages)


def test_a_failed_last_call_falls_back_to_the_last_answered_one():
    calls = [LMCallEvent("m", "first", "answered"), LMCallEvent("m", "second", None, error="timeout")]
    row = session_row(SessionTrace("s", "r", "e", steps=[StepTrace(0, lm_calls=calls)]))
    assert (row["prompt"], row["completion"], row["n_lm_calls"]) == ("first", "answered", 2)
    empty = session_row(SessionTrace("s", "r", "e"))
    assert (empty["prompt"], empty["completion"], empty["messages"], empty["prompt_tokens"]) == (None, None, [], None)
