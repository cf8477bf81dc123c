"""Whatever a policy sends, the loop does not crash: bad replies are error observations, failures end the session."""

import asyncio

import pytest

from proofgym.policies import PolicyReply, ScriptedPolicy
from proofgym.rollouts import run_rollout
from proofgym.traces import LMCallEvent

from ._support import RecordingPolicy, call


def rollout(env, policy, **options):
    return asyncio.run(run_rollout(env, seed=1, policy=policy, **options))


def test_a_reply_with_an_error_is_fed_back_and_costs_a_turn(counter_env):
    bad = PolicyReply(None, {"role": "assistant", "content": "{oops"}, error="no tool call found")
    result = rollout(counter_env, RecordingPolicy([bad, call({"tool": "add", "args": {"n": 1}}),
                                                  call({"tool": "finish"})]))
    first = result.session.steps[0]
    assert first.action is None and first.info["error"] == "no tool call found" and first.info["policy_error"]
    assert first.env_event.result["text"] == "Error: no tool call found" and first.info["turn"] == 1
    assert result.messages[3] == {"role": "user", "content": "Error: no tool call found"}
    assert result.status == "ok" and result.length == 3 and result.outcome_score == 1.0


@pytest.mark.parametrize("action", [None, 7, "not json", {"tool": "add", "args": {"n": "two"}}, {"tool": "nope"},
                                    ["add"], '{"tool": "add", "args": {"n": 1}, "tool": "finish"}'])
def test_an_action_the_environment_rejects_is_an_error_observation(counter_env, action):
    result = rollout(counter_env, ScriptedPolicy([action, {"tool": "finish"}]))
    first = result.session.steps[0]
    assert result.status == "ok" and first.env_event.result["text"].startswith("Error:") and first.info["error"]
    assert result.length == 2


def test_an_action_that_is_not_json_native_is_stored_as_text(counter_env):
    result = rollout(counter_env, ScriptedPolicy([{"tool": "add", "args": {"n": object()}}, {"tool": "finish"}]))
    assert isinstance(result.session.steps[0].action["args"]["n"], str)


def test_a_policy_that_raises_ends_the_session_with_status_error(counter_env):
    result = rollout(counter_env, RecordingPolicy([call({"tool": "add", "args": {"n": 1}}), RuntimeError("boom")]))
    assert result.status == "error" and result.error == "RuntimeError: boom"
    assert result.length == 1 and result.outcome_score is None
    assert result.session.outcome_reward.total == pytest.approx(0.1)


def test_an_unavailable_policy_ends_the_session_and_is_not_scored(counter_env):
    lm = LMCallEvent(model="m", error="HTTP 500: down (after 4 attempts)")
    down = PolicyReply(None, {"role": "assistant", "content": ""}, [lm], error=lm.error, unavailable=True)
    result = rollout(counter_env, RecordingPolicy([down]))
    assert result.status == "error" and "unavailable on turn 1: HTTP 500" in result.error
    [step] = result.session.steps
    assert step.lm_calls == [lm] and step.env_event is None and step.info["policy_unavailable"]
    assert result.outcome_score is None and result.total_return == 0.0


def test_a_policy_returning_something_else_ends_the_session_with_status_error(counter_env):
    class Wrong:
        policy_id = "wrong"

        async def act(self, request):
            return {"tool": "finish"}

        async def aclose(self):
            pass

    result = rollout(counter_env, Wrong())
    assert result.status == "error" and "returned dict, not a PolicyReply" in result.error


def test_an_environment_that_raises_in_a_step_ends_the_session_with_status_error():
    from proofgym.envs import Observation, Tool, ToolEnv, register_env
    from proofgym.envs import ENVIRONMENTS

    class Broken(ToolEnv):
        def __init__(self):
            super().__init__([Tool("go", "Go.")], max_turns=3)

        def _reset(self, seed):
            return Observation("start")

        def _call_tool(self, call):
            raise OSError("disk full")

    register_env("broken-rollout-test", Broken)
    try:
        result = rollout("broken-rollout-test", ScriptedPolicy([{"tool": "go"}]))
    finally:
        ENVIRONMENTS.unregister("broken-rollout-test")
    assert result.status == "error" and result.error == "OSError: disk full" and result.length == 0


def test_invalid_arguments_raise_before_anything_runs(counter_env):
    policy = ScriptedPolicy([])
    with pytest.raises(ValueError, match="unknown environment 'nope'"):
        rollout("nope", policy)
    with pytest.raises(TypeError):
        rollout(counter_env, policy, env_config={"colour": "red"})
    with pytest.raises(TypeError, match="seed must be an int"):
        asyncio.run(run_rollout(counter_env, seed="1", policy=policy))
    with pytest.raises(ValueError, match="max_turns"):
        rollout(counter_env, policy, max_turns=0)
    with pytest.raises(ValueError, match="max_time_s"):
        rollout(counter_env, policy, max_time_s=float("inf"))
    with pytest.raises(TypeError, match="policy must have"):
        rollout(counter_env, object())
