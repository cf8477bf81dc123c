"""Every step is recorded: the observation acted on, the action, LM calls, env event, verification, rewards."""

import asyncio
import json

import pytest

from proofgym.domains import gold_completion
from proofgym.policies import OraclePolicy, PolicyReply
from proofgym.rollouts import run_rollout
from proofgym.traces import LMCallEvent, SessionTrace

from ._support import RecordingPolicy, call


def test_a_solved_episode_is_recorded_step_by_step(counter_env):
    lm = LMCallEvent(model="m", prompt_tokens=10, completion_tokens=3, latency_s=0.01)
    replies = [PolicyReply({"tool": "add", "args": {"n": 2}}, {"role": "assistant", "content": "add"}, [lm]),
               call({"tool": "finish"})]
    result = asyncio.run(run_rollout(counter_env, seed=2, policy=RecordingPolicy(replies), run_id="r1",
                                     correlation_id="trace_abc", metadata={"split": "eval"}))
    session = result.session
    assert (session.run_id, session.env_name, session.seed, session.policy_id) == ("r1", counter_env, 2, "recording")
    assert session.correlation_id == "trace_abc" and session.metadata == {"split": "eval"}
    assert session.status == "ok" and session.error is None and session.ended_at >= session.started_at
    first, second = session.steps
    assert first.observation["text"] == "Reach 2." and second.observation["text"] == "counter = 2"
    assert first.action == {"tool": "add", "args": {"n": 2}} and first.lm_calls == [lm]
    assert (first.env_event.tool, first.env_event.args) == ("add", {"n": 2})
    assert first.env_event.result["text"] == "counter = 2" and first.reward == pytest.approx(0.1)
    assert [(r.key, r.kind, r.value) for r in first.event_rewards] == [("progress", "shaped", 0.1)]
    assert first.verification is None and second.verification.outcome == "certified"
    assert second.verification.verifier == "counter@1" and second.done and not second.truncated
    assert result.total_return == pytest.approx(1.1) and result.outcome_score == 1.0 and result.length == 2
    assert session.outcome_reward.total == pytest.approx(1.1) and session.outcome_reward.steps == 2
    assert result.verdict["evidence"] == {"count": 2}
    assert SessionTrace.from_dict(json.loads(json.dumps(session.to_dict()))) == session


def test_penalties_are_event_rewards_of_kind_penalty(counter_env):
    replies = [call({"tool": "add", "args": {"n": 1}}), call({"tool": "finish"})]
    result = asyncio.run(run_rollout(counter_env, seed=5, policy=RecordingPolicy(replies),
                                     env_config={"step_penalty": 0.01}))
    assert [(r.key, r.kind) for r in result.session.steps[0].event_rewards] == [("progress", "shaped"),
                                                                                 ("step_penalty", "penalty")]
    assert result.outcome_score == 0.0  # finished on the wrong count


def test_the_conversation_has_the_system_text_observations_replies_and_results(counter_env):
    replies = [call({"tool": "add", "args": {"n": 1}}, "adding"), call({"tool": "finish"}, "done")]
    policy = RecordingPolicy(replies)
    result = asyncio.run(run_rollout(counter_env, seed=1, policy=policy))
    assert result.messages == [
        {"role": "system", "content": "You are a counter."},
        {"role": "user", "content": "Reach 1."},
        {"role": "assistant", "content": "adding"},
        {"role": "user", "content": "counter = 1"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "finished"},
    ]
    assert [len(r.messages) for r in policy.requests] == [2, 4]
    assert policy.requests[0].tools[0]["function"]["name"] == "add"
    assert [r.turn for r in policy.requests] == [1, 2] and {r.seed for r in policy.requests} == {1}
    assert policy.requests[0].accepts_text is False


def test_native_tool_calls_are_answered_with_tool_messages(counter_env):
    native = {"type": "function", "id": "call_9", "function": {"name": "add", "arguments": '{"n": 1}'}}
    extra = {"type": "function", "id": "call_10", "function": {"name": "finish", "arguments": "{}"}}
    replies = [PolicyReply(native, {"role": "assistant", "content": None, "tool_calls": [native, extra]}),
               call({"tool": "finish"})]
    result = asyncio.run(run_rollout(counter_env, seed=1, policy=RecordingPolicy(replies)))
    assert result.messages[3] == {"role": "tool", "tool_call_id": "call_9", "content": "counter = 1"}
    assert result.messages[4] == {"role": "tool", "tool_call_id": "call_10",
                                  "content": "Error: not run; call one tool per turn"}
    assert result.session.steps[0].env_event.args == {"n": 1} and result.outcome_score == 1.0


def test_a_rulebook_rollout_carries_the_verdict_and_the_shaped_components():
    policy = OraclePolicy("loan")
    result = asyncio.run(run_rollout("loan", seed=9, policy=policy))
    [step] = result.session.steps
    assert step.observation["data"]["system"] == result.messages[0]["content"]
    assert step.action["args"]["completion"] == gold_completion(policy._env.domain, policy._env.record)
    assert step.verification.outcome == "certified" and step.verification.verifier.startswith("rulebook")
    assert step.verification.verdict["evidence"]["proof_checked"] is True
    assert {r.key for r in step.event_rewards} == {"format", "certified", "correct", "grounded", "graded"}
    assert sum(r.value for r in step.event_rewards) == pytest.approx(step.reward)
    assert result.session.outcome_reward.score == 1.0
