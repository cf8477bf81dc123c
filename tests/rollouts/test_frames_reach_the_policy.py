"""An observation's frame reaches the policy (``PolicyRequest.frame``), checked; a malformed one never crashes the
rollout: it is dropped, and the observation, its data and the step's info say why."""

import asyncio
import base64

import pytest
from policies._support import png_base64

from proofgym.envs import ENVIRONMENTS, Observation, ToolCall, ToolEnv, ToolResult, register_env
from proofgym.policies import PolicyReply
from proofgym.rollouts import run_rollout

from ._support import ADD, FINISH, RecordingPolicy, call

GOOD = png_base64(8, 8)
HUGE = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + (4096).to_bytes(4, "big") * 2 + b"\0" * 9).decode()


class FramedEnv(ToolEnv):
    """Every observation carries ``frame`` as its ``image_png_base64``; ``finish`` ends the episode."""

    def __init__(self, *, frame: object = GOOD) -> None:
        super().__init__([ADD, FINISH], max_turns=5)
        self.frame = frame

    def _view(self, text: str) -> Observation:
        return Observation(text, {"image_png_base64": self.frame, "turn": self._turn})

    def _reset(self, seed: int) -> Observation:
        return self._view("Start.")

    def _call_tool(self, call: ToolCall) -> ToolResult:
        return ToolResult(self._view(f"ran {call.name}"), done=call.name == "finish",
                          info={"tool": call.name, "outcome": "certified" if call.name == "finish" else None})


@pytest.fixture
def framed_env():
    register_env("framed-rollout-test", FramedEnv)
    yield "framed-rollout-test"
    ENVIRONMENTS.unregister("framed-rollout-test")


def rollout(env_name, policy, **config):
    return asyncio.run(run_rollout(env_name, seed=0, policy=policy, env_config=config))


ADD_ONE = call({"tool": "add", "args": {"n": 1}})
FINISH_CALL = call({"tool": "finish"})


def test_each_turn_the_policy_gets_the_last_observations_frame_and_text_only_messages(framed_env):
    policy = RecordingPolicy([ADD_ONE, FINISH_CALL])
    result = rollout(framed_env, policy)
    assert result.status == "ok" and [r.frame.encoded for r in policy.requests] == [GOOD, GOOD]
    assert all(isinstance(m["content"], str) for r in policy.requests for m in r.messages)
    assert result.session.steps[0].observation["data"]["image_png_base64"] == GOOD  # the trace keeps the frame


@pytest.mark.parametrize("frame, reason", [
    ("bm90IGEgcG5n", "it is not a PNG (no PNG signature)"),
    ("not base64 at all", "it is not valid base64"),
    (12, "expected a PNG as base64 text, got int"),
    (HUGE, "it is 4096 x 4096 pixels, more than the limit of 1024 x 1024"),
])
def test_a_malformed_frame_is_dropped_and_the_observation_says_why(framed_env, frame, reason):
    policy = RecordingPolicy([ADD_ONE, FINISH_CALL])
    result = rollout(framed_env, policy, frame=frame)
    problem = f"the observation's frame (data.image_png_base64) cannot be shown: {reason}"
    assert result.status == "ok" and result.length == 2 and result.outcome_score == 1.0
    assert [r.frame for r in policy.requests] == [None, None]
    assert policy.requests[0].messages[-1]["content"] == f"Error: {problem}\n\nStart."
    first = result.session.steps[0]
    assert "image_png_base64" not in first.observation["data"] and first.observation["data"]["frame_error"] == problem
    assert first.info["frame_error"] == problem and first.env_event.result["text"].startswith(f"Error: {problem}")


@pytest.mark.parametrize("first, error", [
    (PolicyReply(None, {"role": "assistant", "content": "{oops"}, error="no tool call found"), "no tool call found"),
    (call({"tool": "jump", "args": {}}), "unknown tool 'jump'"),
])
def test_after_an_error_observation_without_a_frame_the_policy_gets_the_last_frame_again(framed_env, first, error):
    # Nothing ran: the world still looks as the last frame showed it (an image-only model still sees it).
    policy = RecordingPolicy([first, FINISH_CALL])
    result = rollout(framed_env, policy)
    assert policy.requests[1].messages[-1]["content"].startswith("Error: ") and error in str(policy.requests[1])
    assert "image_png_base64" not in result.session.steps[0].env_event.result["data"]  # the trace records no copy
    assert policy.requests[1].frame.encoded == GOOD and result.status == "ok"
