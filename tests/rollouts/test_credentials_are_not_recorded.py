"""A rollout records no credential, whatever policy wrote it: a plugin policy that records its model call's headers
and URL, reports an error quoting a URL with a password, or a caller's metadata holding a key, are all recorded with
the credential as ``***``, in the session and in the trace store it is written to."""

from __future__ import annotations

import asyncio
import json

from proofgym.policies import PolicyReply
from proofgym.rollouts import run_rollout
from proofgym.traces import LMCallEvent, TraceStore

from ._support import RecordingPolicy, call

SECRET = "S3cr3t-value"
URL = f"https://user:{SECRET}@models.example/v1/chat/completions?cid=trace_p&api_key={SECRET}"


def _recorded_call() -> LMCallEvent:
    """What a plugin policy might record of a call it made: the headers it sent and the URL it posted to."""
    return LMCallEvent(model="m", request={"url": URL, "headers": {"Authorization": f"Bearer {SECRET}"},
                                           "messages": [{"role": "user", "content": "Reach 2."}], "seed": 3},
                       error=f"retried after ConnectError posting to {URL}")


def test_credentials_a_policy_records_are_not_recorded(counter_env, tmp_path):
    replies = [PolicyReply({"tool": "add", "args": {"n": 2}}, {"role": "assistant", "content": "add"},
                           [_recorded_call()]),
               PolicyReply(None, {"role": "assistant", "content": ""}, error=f"could not parse the reply from {URL}"),
               call({"tool": "finish"})]
    result = asyncio.run(run_rollout(counter_env, seed=2, policy=RecordingPolicy(replies), run_id="r1",
                                     metadata={"inference_url": URL, "client": {"x-api-key": SECRET}}))
    session = result.session
    [recorded] = session.steps[0].lm_calls
    assert recorded.request["headers"] == {"Authorization": "***"} and recorded.request["seed"] == 3
    assert recorded.request["url"] == "https://***@models.example/v1/chat/completions?cid=trace_p&api_key=***"
    assert session.metadata["client"] == {"x-api-key": "***"}
    assert "could not parse the reply from https://***@models.example" in session.steps[1].info["error"]
    with TraceStore(tmp_path / "traces.db") as store:
        store.start_run("r1", kind="test", env_name=counter_env)
        store.write_session(session)
        [stored] = store.list_sessions(run_id="r1")
        text = json.dumps(store.get_session(stored.session_id).to_dict())
    assert SECRET not in json.dumps(session.to_dict()) and SECRET not in text


def test_an_exception_that_quotes_a_url_ends_the_session_without_its_credentials(counter_env):
    replies = [RuntimeError(f"the model server at {URL} went away")]
    session = asyncio.run(run_rollout(counter_env, seed=1, policy=RecordingPolicy(replies))).session
    assert session.status == "error" and "the model server at https://***@models.example" in session.error
    assert SECRET not in session.error
