"""The trace store writes no credential down, whoever wrote the session: a run's config, a session's metadata and
each model call's request are stored with every credential in them as ``***`` (a session from another task app,
read back from its answer as the eval client does, has not been through proofgym's rollout loop)."""

from __future__ import annotations

import json

import pytest

from proofgym.traces import (
    LMCallEvent,
    SessionTrace,
    StepTrace,
    TraceStore,
    TraceStoreError,
)

SECRET = "S3cr3t-value"
URL = f"http://user:{SECRET}@gpu:8000/v1?cid=trace_x&api_key={SECRET}"


def test_a_run_config_is_stored_without_its_credentials(store):
    store.start_run("run-2", kind="eval", config={"task_app_url": URL, "policy_config": {
        "inference_url": URL, "extra_body": {"authorization": f"Bearer {SECRET}", "seed": 1},
        "api_key_env": "OPENAI_API_KEY"}})
    [run] = [run for run in store.list_runs() if run.run_id == "run-2"]
    assert SECRET not in json.dumps(run.config)
    assert run.config["policy_config"]["extra_body"] == {"authorization": "***", "seed": 1}
    assert run.config["policy_config"]["api_key_env"] == "OPENAI_API_KEY"  # names a variable: kept
    assert run.config["task_app_url"] == "http://***@gpu:8000/v1?cid=trace_x&api_key=***"


def test_a_session_from_elsewhere_is_stored_without_its_credentials(store):
    call = LMCallEvent(model="m", request={"messages": [{"role": "user", "content": "hi"}], "x-api-key": SECRET,
                                           "extra_headers": {"Authorization": f"Bearer {SECRET}"}},
                       response={"choices": [], "logprobs": {"content": [{"token": "hi", "logprob": -0.5}]}})
    session = SessionTrace.from_dict(SessionTrace(
        session_id="remote-1", run_id="run-1", env_name="grant_eligibility", seed=0, started_at=1.0,
        metadata={"inference_url": URL, "auth": {"password": SECRET}},
        steps=[StepTrace(index=0, observation={"text": "o"}, lm_calls=[call])]).to_dict())
    store.write_session(session)
    stored = store.get_session("remote-1")
    assert SECRET not in json.dumps(stored.to_dict())
    [recorded] = stored.steps[0].lm_calls
    assert recorded.request == {"messages": [{"role": "user", "content": "hi"}], "x-api-key": "***",
                                "extra_headers": {"Authorization": "***"}}
    assert recorded.response == call.response  # a response's "token" (logprobs) is the model's output, kept
    assert stored.metadata == {"inference_url": "http://***@gpu:8000/v1?cid=trace_x&api_key=***", "auth": "***"}


@pytest.mark.parametrize("url", [f"mysql://user:{SECRET}@db/traces?token={SECRET}",
                                 f"postgresql://user:{SECRET}@db:not-a-port/traces?password={SECRET}"])
def test_a_store_url_that_cannot_be_opened_is_named_without_its_credentials(url):
    with pytest.raises(TraceStoreError) as refused:
        TraceStore(url)
    assert "trace store URL '" in str(refused.value) and SECRET not in str(refused.value)


def test_a_run_that_ended_on_an_error_quoting_a_url_is_stored_without_its_credentials(store):
    store.start_run("run-3", kind="eval")
    with pytest.raises(ConnectionError), store.ending_run("run-3"):
        raise ConnectionError(f"cannot reach {URL}")
    [run] = [run for run in store.list_runs() if run.run_id == "run-3"]
    assert run.status == "error"
    assert "cannot reach http://***@gpu:8000/v1?cid=trace_x&api_key=***" in run.summary["error"]
    assert SECRET not in json.dumps(run.summary)
