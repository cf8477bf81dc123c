"""A rollout that ran is stored once and answered: its response encodes whatever the trajectory holds, it is
built before the session is committed, and should building it fail all the same, the answer is a clear JSON
500 saying the rollout was stored (never a traceback)."""

import json

import pytest

import proofgym.taskapp._app as app_module
from proofgym.taskapp import RolloutRequest
from proofgym.taskapp._response import build_response, response_body
from proofgym.traces import EnvEvent, OutcomeReward, SessionTrace, StepTrace

from ._support import rollout_body, write_file

HOSTILE_TEXT = "lone \ud800 and \udfff, NUL \x00, escape \x1b[0m"


def deep(levels):
    value = "bottom"
    for _ in range(levels):
        value = [value]
    return value


def strict_json(data: bytes):
    """``data`` parsed as strict JSON: UTF-8 and no NaN / Infinity (what every client can read)."""
    return json.loads(data.decode("utf-8"), parse_constant=lambda name: pytest.fail(f"{name} in the response"))


def hostile_session() -> SessionTrace:
    """A finished session holding, in every place the response copies, what no encoder accepts as it is."""
    hostile = {HOSTILE_TEXT: HOSTILE_TEXT, "nan": float("nan"), "inf": -float("inf"), "huge": 10**5000,
               "deep": deep(200), "object": object(), "bytes": b"\xff", 7: (1, 2)}
    step = StepTrace(index=0, observation={"text": HOSTILE_TEXT, "data": hostile},
                     action={"tool": "t", "args": hostile}, reward=0.5, done=True, info=dict(hostile),
                     env_event=EnvEvent(tool="t", args=hostile, result=hostile))
    return SessionTrace(session_id="s1", run_id="r1", env_name="grant_eligibility", seed=0, policy_id=HOSTILE_TEXT,
                        status="error", error=HOSTILE_TEXT, steps=[step],
                        outcome_reward=OutcomeReward(total=0.5, steps=1, annotation=hostile))


def body_for(session, trace_format="full", **hostile):
    request = RolloutRequest.model_validate({"run_id": "r1", "record": {"return_trace": True}})
    return response_body(request, session, env_name="grant_eligibility", policy_id=session.policy_id,
                         outcome_score=None, verdict={"why": HOSTILE_TEXT, "score": float("nan"), **hostile},
                         invalid_reason=HOSTILE_TEXT, correlation_id=None, trace_format=trace_format)


@pytest.mark.parametrize("trace_format", [None, "compact", "structured", "full"])
def test_a_response_encodes_whatever_the_trajectory_holds(trace_format):
    data = strict_json(body_for(hostile_session(), trace_format))
    step = data["trajectories"][0]["steps"][0]
    cleaned = "lone \ufffd and \ufffd, NUL \ufffd, escape \x1b[0m"
    assert step["obs"]["text"] == cleaned and data["error"] == cleaned and data["pipeline_metadata"]["policy_id"]
    assert json.loads(step["tool_calls"][0]["function"]["arguments"])["nan"] == "nan" and step["info"]["inf"] == "-inf"
    assert "digits" in step["info"]["huge"] and "deeper than the limit" in json.dumps(step["obs"]["data"]["deep"])
    assert data["trajectories"][0]["final"]["verdict"] == {"why": cleaned, "score": "nan"}
    assert (data["trace"] is None) == (trace_format is None)


@pytest.mark.parametrize("value", [pytest.param(value, id=name) for name, value in [
    ("surrogate", "\udc00"), ("digits", -(10**5000)), ("deep", deep(200)), ("object", object()), ("int key", {7: 1}),
    ("bytes", b"\xff")]])
def test_each_value_no_client_could_read_is_bounded_on_its_own(value):
    session = SessionTrace(session_id="s1", run_id="r1", env_name="grant_eligibility", policy_id="p",
                           steps=[StepTrace(index=0, observation={"text": "t"}, info={"v": value})])
    data = strict_json(body_for(session, None))
    assert data["trajectories"][0]["steps"][0]["info"]["v"] != value


def test_a_clean_response_is_pydantics_encoding_of_the_session_as_it_is():
    session = SessionTrace(session_id="s1", run_id="r1", env_name="grant_eligibility", policy_id="p",
                           steps=[StepTrace(index=0, observation={"text": "t \x00", "n": 10**900}, info={"v": [1]})])
    request = RolloutRequest.model_validate({"run_id": "r1"})
    details = dict(env_name="grant_eligibility", policy_id="p", outcome_score=1.0, verdict={"ok": True},
                   invalid_reason=None, correlation_id=None, trace_format="full")
    unbounded = build_response(request, session, bound=False, **details).model_dump_json().encode()
    assert response_body(request, session, **details) == unbounded


@pytest.mark.parametrize("env_name, actions", [
    ("grant_eligibility", [{"tool": "answer", "args": {"text": "\ud800", "n": float("nan"), "m": "@@digits@@",
                                                       "deep": deep(55)}}]),
    ("grant_eligibility", ["\udc00\ud800 \x00 NaN"]),
    ("verilog", [write_file("module \ud800; endmodule\x00", "top.v")]),
    ("verilog", [write_file("module m; endmodule", "\ud800.v")]),
])
def test_a_hostile_scripted_rollout_is_stored_exactly_once_and_answered_200(make_client, stored, env_name, actions):
    body = rollout_body(policy_name="scripted", policy_config={"actions": actions}, max_turns=1,
                        record={"return_trace": True, "trace_format": "full"})
    # Sent as a client writes it: NaN as NaN, lone surrogates as \u escapes, a 1000-digit integer (the limit).
    text = json.dumps(body, ensure_ascii=True).replace('"@@digits@@"', "1" * 1000)
    response = make_client(env_name).post("/rollout", content=text.encode(),
                                          headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    data = strict_json(response.content)
    session_id = data["pipeline_metadata"]["session_id"]
    assert stored().count_sessions() == 1 and stored().get_session(session_id) is not None
    assert "\ufffd" in json.dumps(data["trajectories"][0]["steps"][0]["tool_calls"], ensure_ascii=False)


def test_a_response_that_cannot_be_built_is_a_clear_500_after_the_session_is_stored(make_client, stored,
                                                                                     monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("a response builder bug")

    monkeypatch.setattr(app_module, "response_body", broken)
    body = rollout_body(policy_name="scripted", policy_config={"actions": ["permit"]})
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 500
    detail = response.json()["detail"]
    [session] = stored().list_sessions()
    assert f"stored (session {session.session_id})" in detail and "Retrying runs and stores the rollout again" in detail
    assert "Traceback" not in response.text and "a response builder bug" not in response.text
    assert "its response could not be built" in caplog.text and "a response builder bug" in caplog.text
