"""The scripted policy replays its actions by turn, then answers with errors."""

import asyncio

import pytest

from proofgym.policies import PolicyRequest, ScriptedPolicy


def act(policy, turn):
    return asyncio.run(policy.act(PolicyRequest(messages=[], turn=turn)))


def test_turn_t_gets_the_t_th_action_and_its_text_as_the_message():
    policy = ScriptedPolicy([{"tool": "compile"}, "plain answer"], policy_id="script-1")
    first, second = act(policy, 1), act(policy, 2)
    assert first.action == {"tool": "compile"} and first.message == {"role": "assistant",
                                                                      "content": '{"tool": "compile"}'}
    assert second.action == "plain answer" and second.message["content"] == "plain answer"
    assert act(policy, 1).action == {"tool": "compile"}  # stateless: any turn, any order
    assert policy.policy_id == "script-1"


def test_past_the_end_every_reply_is_an_error_the_agent_sees():
    reply = act(ScriptedPolicy(["x"]), 2)
    assert reply.action is None and not reply.unavailable
    assert reply.error == "the script has 1 actions; none for turn 2"


@pytest.mark.parametrize("bad", ["compile", None, 3])
def test_actions_must_be_a_list(bad):
    with pytest.raises(TypeError, match="actions must be a list"):
        ScriptedPolicy(bad)
