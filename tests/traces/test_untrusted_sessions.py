"""Any data in a session's payloads (any code point, non-finite numbers, huge integers, deep nesting): the store
either keeps it and gives it back unchanged, or refuses the session with a ``TraceValidationError`` naming the
field, before anything is written; once cleaned by ``bounded_json`` it is always kept. On SQLite and Postgres."""

from __future__ import annotations

import dataclasses

from _untrusted import UNTRUSTED_JSON, UNTRUSTED_TEXT
from hypothesis import HealthCheck, given, settings

from proofgym.core import bounded_json, model_text
from proofgym.traces import TraceStore, TraceValidationError

from ._support import make_session

_COUNTER = iter(range(10**9))


def _hostile_session(data, text, *, clean: bool, run_id: str):
    session = make_session(next(_COUNTER), run_id, prefix="untrusted")
    value, words = (bounded_json(data), model_text(text)) if clean else (data, text)
    step = dataclasses.replace(session.steps[0], observation={"text": words, "data": value}, action=value,
                               info={"echo": value, words: 1})
    step.lm_calls = [dataclasses.replace(call, request=value, response={"text": words}) for call in step.lm_calls]
    if step.env_event is not None:
        step.env_event = dataclasses.replace(step.env_event, args=value, result=words)
    session.steps[0] = step
    session.metadata = {"note": words}
    return session


def _check(store: TraceStore, data, text, run_id: str = "run-1") -> None:
    raw = _hostile_session(data, text, clean=False, run_id=run_id)
    try:
        store.write_session(raw)
    except TraceValidationError as exc:
        assert f"session {raw.session_id!r}" in str(exc)
        assert store.get_session(raw.session_id) is None
    else:
        assert store.get_session(raw.session_id).to_dict() == raw.to_dict()
    clean = _hostile_session(data, text, clean=True, run_id=run_id)
    store.write_session(clean)
    assert store.get_session(clean.session_id).to_dict() == clean.to_dict()


_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_SETTINGS
@given(data=UNTRUSTED_JSON, text=UNTRUSTED_TEXT)
def test_sqlite_keeps_or_refuses_any_payload_and_always_keeps_it_cleaned(store, data, text):
    _check(store, data, text)


@settings(_SETTINGS, max_examples=25)
@given(data=UNTRUSTED_JSON, text=UNTRUSTED_TEXT)
def test_postgres_keeps_or_refuses_any_payload_and_always_keeps_it_cleaned(postgres_url, data, text):
    with TraceStore(postgres_url) as store:
        _check(store, data, text, run_id=store.start_run(kind="eval"))
