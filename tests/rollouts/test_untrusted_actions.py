"""Whatever a policy sends (actions, messages, model-call records: any code point, any JSON), the rollout ends
normally, its session encodes as strict JSON, and the trace store keeps it and gives back what was returned."""

from __future__ import annotations

import asyncio
import json

import pytest
from _untrusted import UNTRUSTED_JSON, UNTRUSTED_TEXT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofgym.policies import PolicyReply
from proofgym.rollouts import run_rollout
from proofgym.traces import LMCallEvent, TraceStore

from ._support import RecordingPolicy

ENVS = ["grant_eligibility", "loan", "verilog"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with TraceStore(tmp_path_factory.mktemp("untrusted") / "traces.db") as opened:
        opened.start_run("untrusted", kind="test")
        yield opened


def _actions(env_name: str, text: str, data) -> list:
    """Actions reaching where each environment reads: tool names, argument values, raw text, JSON strings."""
    common = [data, text, {"tool": text, "args": data}, {"function": {"name": text, "arguments": text}},
              {"function": {"name": "submit", "arguments": "[" * 5000 + "]" * 5000}}]
    if env_name == "verilog":
        return [{"tool": "write_file", "args": {"path": text, "content": text}},
                {"tool": "write_file", "args": {"path": "top.v", "content": f"module TopModule; // {text}\nendmodule"}},
                {"tool": "write_file", "args": {"path": "top.v", "content": data}}, *common]
    return [f"<decision>{text}</decision>", *common]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(env_name=st.sampled_from(ENVS), text=UNTRUSTED_TEXT, data=UNTRUSTED_JSON)
def test_any_policy_output_is_recorded_encodable_and_stored_as_returned(store, env_name, text, data):
    replies = [PolicyReply(action, {"role": "assistant", "content": text, "extra": data},
                           lm_calls=[LMCallEvent(model=text, request=data, response={"text": text}, error=text)])
               for action in _actions(env_name, text, data)]
    policy = RecordingPolicy(replies)
    result = asyncio.run(run_rollout(env_name, seed=3, policy=policy, max_turns=len(replies), run_id="untrusted"))
    session = result.session
    assert session.status == "ok", session.error
    json.dumps(session.to_dict(), allow_nan=False, ensure_ascii=False).encode("utf-8")
    json.dumps(result.messages, allow_nan=False, ensure_ascii=False).encode("utf-8")
    for request in policy.requests:  # what the policy is shown next is under the same rule
        json.dumps(request.messages, allow_nan=False, ensure_ascii=False).encode("utf-8")
    store.write_session(session)
    stored, returned = store.get_session(session.session_id).to_dict(), json.loads(json.dumps(session.to_dict()))
    assert stored == returned, _first_difference(stored, returned)


def _first_difference(a, b, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{index}]")
    return f"{path}: stored {a!r:.200} != returned {b!r:.200}"
