"""``TraceStore.get_sessions``: many sessions read in a few queries, each the same as ``get_session`` reads it."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from proofgym.traces import TraceValidationError

from ._support import make_session


def _counting(store) -> list[str]:
    statements: list[str] = []
    event.listen(store._engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))
    return statements


def test_sessions_read_together_equal_those_read_one_by_one_in_the_order_asked(store):
    sessions = [make_session(i) for i in range(30)]
    store.write_sessions(sessions)
    asked = [s.session_id for s in reversed(sessions[::3])]
    together = store.get_sessions(asked + ["not-stored", asked[0]])
    assert [s.session_id for s in together] == asked  # the missing id left out, the repeated one once
    assert [s.to_dict() for s in together] == [store.get_session(sid).to_dict() for sid in asked]


def test_reading_many_sessions_takes_as_many_queries_as_reading_one(store):
    store.write_sessions([make_session(i) for i in range(60)])
    statements = _counting(store)
    store.get_session("s000000")
    one = len(statements)
    statements.clear()
    assert len(store.get_sessions([f"s{i:06d}" for i in range(60)])) == 60
    assert len(statements) == one


def test_bad_ids_are_refused_naming_the_field(store):
    with pytest.raises(TraceValidationError, match="session_id must be a string without NUL characters"):
        store.get_sessions(["ok", "bad\x00"])
    with pytest.raises(TraceValidationError, match="session_ids must be a list of session ids, not one string"):
        store.get_sessions("s000000")
