"""Invalid sessions, runs and filters are refused with an error naming the session (or run) and the field."""

from __future__ import annotations

import math

import pytest

from proofgym.traces import (
    DuplicateSessionError,
    StepTrace,
    TraceStoreError,
    TraceValidationError,
    UnknownRunError,
    validate_session,
)

from ._support import make_session


def _set(path: str, value):
    def mutate(session):
        *parents, last = path.split(".")
        target = session
        for part in parents:
            name, _, index = part.partition("[")
            target = getattr(target, name)
            if index:
                target = target[int(index[:-1])]
        setattr(target, last, value)
    return mutate


class _Unserializable:
    """No JSON form; its repr is the same in every process (a test id: xdist workers must collect alike)."""

    def __repr__(self) -> str:
        return "<unserializable>"


CASES = [
    ("steps[0].reward", math.nan, "finite number"),
    ("steps[1].reward", math.inf, "finite number"),
    ("steps[0].event_rewards[0].value", -math.inf, "finite number"),
    ("steps[0].env_event.reward", math.nan, "finite number"),
    ("steps[0].lm_calls[0].latency_s", math.nan, "finite number"),
    ("steps[0].lm_calls[0].prompt_tokens", -1, "non-negative integer"),
    ("steps[0].lm_calls[0].completion_tokens", 2.5, "an integer"),
    ("outcome_reward.total", math.nan, "finite number"),
    ("outcome_reward.score", math.inf, "finite number"),
    ("steps[0].info", {"x": math.nan}, "without NaN"),
    ("steps[0].observation", _Unserializable(), "JSON-serializable"),
    ("steps[0].action", {("tuple", "key"): 1}, "JSON-serializable"),
    ("steps[0].info", ["not", "a", "mapping"], "a mapping"),
    ("metadata", "x", "a mapping"),
    ("steps[0].event_rewards[0].kind", "bonus", "one of shaped"),
    ("steps[0].done", "yes", "True or False"),
    ("steps[1].index", 0, "greater than the previous step's index 0"),
    ("steps[0].index", -1, "non-negative"),
    ("status", "done", "one of ok"),
    ("seed", "3", "an integer"),
    ("seed", True, "an integer"),
    ("seed", 2**70, "64-bit integer"),
    ("started_at", math.nan, "finite number"),
    ("env_name", "", "non-empty string"),
    ("run_id", None, "a string"),
    ("policy_id", "bad\x00byte", "without NUL"),  # an id is kept as sent or refused; an error message is cleaned
    ("correlation_id", 7, "a string or None"),
    ("steps[0].verification", "certified", "a VerificationEvent"),
    ("steps[0].lm_calls", [{"model": "m"}], "a LMCallEvent"),
    ("outcome_reward", 1.0, "an OutcomeReward"),
]


@pytest.mark.parametrize(("field", "value", "expected"), CASES, ids=[f"{c[0]}={c[1]!r}" for c in CASES])
def test_an_invalid_field_is_named_and_nothing_is_written(store, field, value, expected):
    bad = make_session(4)  # two steps, LM calls, env events, event rewards, an outcome
    _set(field, value)(bad)
    with pytest.raises(TraceValidationError) as error:
        validate_session(bad)
    message = str(error.value)
    assert message.startswith("session 's000004': " + field) and expected in message, message
    with pytest.raises(TraceValidationError):
        store.write_session(bad)
    with pytest.raises(TraceValidationError):
        store.write_sessions([make_session(0), bad])  # the valid one is not written either
    assert store.count_sessions() == 0


def test_not_a_session_at_all_is_refused(store):
    with pytest.raises(TraceValidationError, match="expected a SessionTrace, got dict"):
        store.write_session({"session_id": "x"})
    with pytest.raises(TypeError, match="use write_session"):
        store.write_sessions(make_session(0))
    bad = make_session(1)
    bad.steps = [StepTrace(index=0), {"index": 1}]
    with pytest.raises(TraceValidationError, match=r"steps\[1\] must be a StepTrace"):
        store.write_session(bad)


def test_sum_of_finite_rewards_that_overflows_is_refused():
    session = make_session(1, n_steps=2)
    session.outcome_reward = None
    for step in session.steps:
        step.reward = 1e308
    with pytest.raises(TraceValidationError, match="sum is finite"):
        validate_session(session)


def test_a_session_id_is_written_once(store):
    store.write_session(make_session(1))
    with pytest.raises(DuplicateSessionError, match="'s000001'") as error:
        store.write_session(make_session(1))
    assert error.value.session_ids == ["s000001"]
    with pytest.raises(DuplicateSessionError, match="already stored"):
        store.write_sessions([make_session(2), make_session(1)])
    with pytest.raises(DuplicateSessionError, match="more than once in one batch"):
        store.write_sessions([make_session(3), make_session(3)])
    assert [s.session_id for s in store.list_sessions()] == ["s000001"]


def test_a_session_of_an_unknown_run_is_refused(store):
    with pytest.raises(UnknownRunError, match="unknown run id 'nope' .*'s000001'.*start_run") as error:
        store.write_sessions([make_session(0), make_session(1, "nope")])
    assert error.value.run_ids == ["nope"] and error.value.session_ids == ["s000001"]
    assert store.count_sessions() == 0


def test_runs_are_validated(store):
    with pytest.raises(TraceStoreError, match="run 'run-1' already exists"):
        store.start_run("run-1", kind="eval")
    with pytest.raises(TraceValidationError, match="run 'r2': kind must be a non-empty string"):
        store.start_run("r2", kind="")
    with pytest.raises(TraceValidationError, match="run 'r3': config must be JSON-serializable"):
        store.start_run("r3", kind="eval", config={"lr": math.nan})
    with pytest.raises(TraceValidationError, match="config must be a mapping"):
        store.start_run("r4", kind="eval", config=[1])
    with pytest.raises(TraceValidationError, match="run '': run_id must be a non-empty string"):
        store.start_run("", kind="eval")
    with pytest.raises(UnknownRunError, match="unknown run id 'missing'"):
        store.finish_run("missing")
    with pytest.raises(TraceValidationError, match="status must be one of ok, error, timeout, cancelled"):
        store.finish_run("run-1", status="running")
    assert [r.run_id for r in store.list_runs()] == ["run-1"]


@pytest.mark.parametrize(("filters", "expected"), [
    ({"min_reward": "high"}, "min_reward must be a number or None"),
    ({"max_reward": math.nan}, "max_reward must be a finite number"),
    ({"status": "finished"}, "status must be one of ok"),
    ({"limit": -1}, "limit must be a non-negative integer"),
    ({"offset": 1.5}, "offset must be an integer"),
    ({"run_id": 3}, "run_id must be a string"),
])
def test_filters_are_validated(store, filters, expected):
    with pytest.raises(TraceValidationError, match=expected):
        store.list_sessions(**filters)
    with pytest.raises(TraceValidationError, match=expected):
        list(store.iter_sessions(**filters))


def test_lookups_take_string_ids(store):
    with pytest.raises(TraceValidationError, match="session_id must be a string, got 3"):
        store.get_session(3)
    with pytest.raises(TraceValidationError, match="correlation_id must be a string, got None"):
        store.find_by_correlation_id(None)
