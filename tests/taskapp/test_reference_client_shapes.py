"""The shapes the reference's client (synth-ai 0.2.14) reads, checked in-process: the root probe, key aliases,
``/task_info`` for one seed, several or none, one ``tool_calls`` shape for every policy, ``policy.config.model``
for policies that call no model, and the ``structured`` trace's ``session_trace``. ``test_synth_ai_client.py``
checks the same against the real client."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from proofgym.taskapp import create_app
from proofgym.http._auth import key_matches, presented_keys
from proofgym.taskapp._response import tool_calls
from proofgym.traces import EnvEvent, SessionTrace, StepTrace

from ._support import AND_GATE, ScriptedModelServer, rollout_body, write_file

KEY = "test-key"


def test_every_presented_key_is_read_and_any_one_may_match():
    headers = {"x-api-key": "a", "x-api-keys": " b, ,a,c ", "authorization": "Bearer d"}
    assert presented_keys(headers) == ["a", "b", "c", "d"]
    assert key_matches("c", presented_keys(headers)) and not key_matches("e", presented_keys(headers))
    assert presented_keys({"x-api-keys": ",".join(f"k{i}" for i in range(40))}) == [f"k{i}" for i in range(16)]
    assert not key_matches("k", [])


def test_the_root_and_health_need_no_key_and_aliases_are_accepted(tmp_path):
    with TestClient(create_app("grant_eligibility", api_key=KEY, store=tmp_path / "t.db")) as client:
        assert client.get("/").json() == {"status": "ok", "service": "proofgym:grant_eligibility"}
        assert client.get("/health").json()["healthy"] is True
        assert client.get("/info").status_code == 401
        assert client.get("/info", headers={"X-API-Key": "old", "X-API-Keys": f"old,{KEY}"}).status_code == 200
        assert client.get("/info", headers={"X-API-Keys": "old,older"}).status_code == 401


def test_task_info_is_one_task_a_list_or_the_task_set(make_client):
    client = make_client()
    one = client.get("/task_info", params={"seed": 4}).json()
    assert one["seed"] == 4 and one["task"]["id"] == one["task_id"] and one["environment"] == "grant_eligibility"
    assert {"dataset", "rubric", "inference", "limits", "task_metadata", "observation", "tools"} <= set(one)
    many = client.get("/task_info", params=[("seed", 4), ("seed", 1)]).json()
    assert [task["seed"] for task in many] == [4, 1] and many[0] == one
    assert client.get("/task_info").json()["taskset"]["environment"] == "grant_eligibility"


def test_info_carries_the_reference_task_info_keys(make_client):
    info = make_client().get("/info").json()
    assert info["service"]["task"] == info["task"] and info["rubrics"] == info["rubric"]
    assert info["limits"]["timeout_seconds"] == 900 and "max_concurrency" in info["limits"]


def test_tool_calls_have_openais_shape_whatever_the_policy():
    native = {"type": "function", "id": "call_x", "function": {"name": "compile", "arguments": '{"sources": []}'}}
    json_call = {"tool": "write_file", "args": {"path": "top.v", "content": "x"}}
    assert tool_calls(StepTrace(0, action=native)) == [native]  # a native call: as the model sent it
    assert tool_calls(StepTrace(2, action=json_call, env_event=EnvEvent(tool="write_file"))) == [
        {"id": "call_2", "type": "function",
         "function": {"name": "write_file", "arguments": json.dumps(json_call["args"])}}]
    assert tool_calls(StepTrace(1, action="the answer", env_event=EnvEvent(tool="answer"))) == [
        {"id": "call_1", "type": "function", "function": {"name": "answer", "arguments": '{"text": "the answer"}'}}]
    assert tool_calls(StepTrace(0, action=None)) == []


def test_a_scripted_rollout_answers_with_the_openai_shape(make_client):
    response = make_client("verilog").post("/rollout", json=rollout_body(policy_name="scripted", policy_config={
        "actions": [{"tool": "compile", "args": {}}], "model": "recorded-only"}, max_turns=1))
    assert response.status_code == 200, response.text
    [call] = response.json()["trajectories"][0]["steps"][0]["tool_calls"]
    assert call == {"id": "call_0", "type": "function", "function": {"name": "compile", "arguments": "{}"}}


def test_a_plain_text_answer_is_the_call_of_the_tool_the_environment_ran(make_client):
    response = make_client().post("/rollout", json=rollout_body(policy_name="scripted", policy_config={
        "actions": ["my answer"]})).json()
    [call] = response["trajectories"][0]["steps"][0]["tool_calls"]
    assert call["function"] == {"name": "answer", "arguments": json.dumps({"text": "my answer"})}


def test_the_oracle_accepts_the_model_the_reference_client_always_sends(make_client, stored):
    body = rollout_body(policy_config={"model": "gpt-x"}, ops=[{"type": "agent"}, {"type": "env"}])
    response = make_client().post("/rollout", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["trajectories"][0]["inference_url"] == ""


def test_the_structured_trace_holds_the_session_in_the_v3_shape(make_client):
    body = rollout_body(2, record={"return_trace": True, "trace_format": "structured"},
                        policy_config={"inference_url": "http://127.0.0.1:9/v1?cid=trace_v3"}, mode="rl")
    data = make_client().post("/rollout", json=body).json()
    trace = data["trace"]
    assert trace["format"] == "structured" and trace["num_steps"] == 1  # the compact summary, and the session:
    session = trace["session_trace"]
    assert session["session_id"] == data["pipeline_metadata"]["session_id"]
    assert session["metadata"]["trace_correlation_id"] == "trace_v3" and session["metadata"]["status"] == "ok"
    [step] = session["session_time_steps"]
    assert step["step_id"] == "step_0" and step["turn_number"] == 1 and step["completed_at"]
    runtime, environment = session["event_history"]
    assert runtime["actions"] == [] and runtime["metadata"]["tool_calls"] == data["trajectories"][0]["steps"][0][
        "tool_calls"]
    assert environment["reward"] == data["metrics"]["mean_return"] and environment["terminated"] is True
    kinds = [message["message_type"] for message in session["markov_blanket_message_history"]]
    assert kinds[-2:] == ["assistant", "tool_result"] and "user" in kinds
    assert session["event_rewards"] and all(reward["event_index"] == 1 for reward in session["event_rewards"])
    assert session["outcome_rewards"][0]["reward_metadata"]["score"] == data["metrics"]["outcome_score"] == 1.0


def test_the_full_trace_is_proofgyms_session_with_the_v3_session_trace_beside(make_client):
    body = rollout_body(record={"return_trace": True, "trace_format": "full"})
    trace = make_client().post("/rollout", json=body).json()["trace"]
    v3 = trace.pop("session_trace")
    session = SessionTrace.from_dict(trace)  # the rest is proofgym's session, and only that
    assert session.steps and v3["session_id"] == session.session_id
    assert len(v3["session_time_steps"]) == len(session.steps) and v3["outcome_rewards"]
    structured = make_client().post("/rollout", json=rollout_body(
        record={"return_trace": True, "trace_format": "structured"})).json()["trace"]["session_trace"]
    assert set(v3) == set(structured)  # the same converter's shape


def test_the_model_a_policy_without_one_was_sent_is_recorded(make_client, stored):
    body = rollout_body(policy_config={"model": "gpt-x"}, run_id="with-model")
    assert make_client().post("/rollout", json=body).status_code == 200
    [session] = stored().list_sessions(run_id="with-model")
    assert stored().get_session(session.session_id).metadata["model"] == "gpt-x"


def test_max_llm_calls_caps_the_model_calls_and_provider_is_recorded_only(make_client, stored):
    actions = [write_file(AND_GATE, f"f{i}.v") for i in range(4)]
    with ScriptedModelServer(actions) as model:
        body = rollout_body(policy_name="openai", run_id="capped", policy_config={
            "model": "m", "inference_url": model.url + "?cid=trace_cap", "provider": "groq", "max_llm_calls": 2})
        response = make_client("verilog").post("/rollout", json=body)
        assert response.status_code == 200, response.text
        assert model.queries == ["cid=trace_cap"] * 2  # two calls, to the inference_url whatever the provider
    data = response.json()
    trajectory = data["trajectories"][0]
    assert trajectory["length"] == 2 and trajectory["steps"][-1]["truncated"] is True
    assert data["status"] == "ok" and data["metrics"]["outcome_score"] == 0.0
    session = stored().get_session(data["pipeline_metadata"]["session_id"])
    assert session.steps[-1].truncated and len([c for step in session.steps for c in step.lm_calls]) == 2
    assert session.metadata["provider"] == "groq" and session.metadata["max_llm_calls"] == 2


def test_the_oracle_accepts_provider_and_max_llm_calls_recorded_not_used(make_client, stored):
    body = rollout_body(run_id="oracle-keys", policy_config={"model": "m", "provider": "openai", "max_llm_calls": 1})
    data = make_client().post("/rollout", json=body).json()
    assert data["status"] == "ok" and data["metrics"]["outcome_score"] == 1.0
    session = stored().get_session(data["pipeline_metadata"]["session_id"])
    assert session.metadata["provider"] == "openai" and session.metadata["max_llm_calls"] == 1


def test_a_bad_provider_or_max_llm_calls_is_a_422_naming_the_field(make_client):
    client = make_client()
    for key, value in (("provider", ""), ("provider", "x" * 65), ("max_llm_calls", 0), ("max_llm_calls", "2")):
        response = client.post("/rollout", json=rollout_body(policy_config={key: value}))
        assert response.status_code == 422, response.text
        assert key in json.dumps(response.json()["detail"])
