"""Any data in a session's payloads (any code point, non-finite numbers, huge integers, deep nesting): the store
either keeps it, or refuses the session with a ``TraceValidationError`` naming the field before anything is
written (NaN, an object that is not JSON: a writer's bug). Text a model wrote (lone surrogates, NUL) is kept under
the one rule, as ``bounded_json`` gives it back: a training run that records a completion holding a NUL must not
fail. Data cleaned by ``bounded_json`` first is always kept as it is. On SQLite and Postgres."""

from __future__ import annotations

import dataclasses
import json

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
        stored = store.get_session(raw.session_id).to_dict()
        if bounded_json(raw.to_dict(), max_depth=10_000) == raw.to_dict():  # no text to clean in it
            assert stored == raw.to_dict()
        else:  # kept with U+FFFD in place of lone surrogates and NUL
            json.dumps(stored, allow_nan=False, ensure_ascii=False).encode("utf-8")
            assert "\x00" not in json.dumps(stored, ensure_ascii=False)
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


def test_a_completion_with_nul_or_a_lone_surrogate_is_stored_under_the_one_rule(store):
    """What broke the demo: its tiny model wrote a NUL, and the store refused the step's action."""
    session = make_session(next(_COUNTER), prefix="nul")
    session.steps[0] = dataclasses.replace(session.steps[0], action="<decision>\x00\ud800</decision>")
    session.error = "parser said \x00"
    store.write_session(session)
    stored = store.get_session(session.session_id)
    assert stored.steps[0].action == "<decision>\ufffd\ufffd</decision>" and stored.error == "parser said \ufffd"
