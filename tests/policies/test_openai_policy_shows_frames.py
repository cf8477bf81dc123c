"""use_vision / image_only_mode: the observation's frame reaches the server as an ``image_url`` content part."""

import logging

import pytest

from proofgym.core import ConfigError
from proofgym.policies import build_policy, read_frame
from proofgym.policies._frames import EARLIER_FRAME, FRAME_INSTRUCTION

from ._server import Reply, payload
from ._support import act, fast_policy, png_base64, request

FRAME = read_frame(png_base64())
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + png_base64()}}
VIEW = "Status: health 9/9.\nMap (5x5, north up, @ is you):\n..@.."
CALL = {"type": "function", "id": "call_1", "function": {"name": "compile", "arguments": "{}"}}
# Two turns in: the first observation, a native call and its tool result (an error observation), the assistant's
# text reply to that, then the current observation as a user message.
HISTORY = [{"role": "system", "content": "You play a game."}, {"role": "user", "content": f"Rules.\n\n{VIEW}"},
           {"role": "assistant", "content": None, "tool_calls": [CALL]},
           {"role": "tool", "tool_call_id": "call_1", "content": f"Error: unknown action 'fly'\n\n{VIEW}"},
           {"role": "assistant", "content": '{"tool": "compile", "args": {}}'},
           {"role": "user", "content": VIEW}]


def sent_messages(server, **options):
    server.script(Reply(payload("vllm_tool_call_write_file")))
    reply = act(fast_policy(server, **options), request(messages=HISTORY, frame=FRAME))
    assert reply.error is None
    [sent] = server.requests
    return sent.body["messages"]


def test_use_vision_sends_the_last_observation_as_its_text_and_the_frame(server):
    messages = sent_messages(server, use_vision=True)
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": VIEW}, IMAGE]}
    assert messages[:-1] == HISTORY[:-1]  # earlier observations stay text, with no frame of their own


def test_after_a_tool_result_the_frame_follows_in_a_user_message(server):
    server.script(Reply(payload("vllm_tool_call_write_file")))
    act(fast_policy(server, use_vision=True), request(messages=HISTORY[:4], frame=FRAME))
    messages = server.requests[0].body["messages"]
    assert messages[:4] == HISTORY[:4]  # a tool message cannot hold an image
    assert messages[4] == {"role": "user", "content": [{"type": "text", "text": "The current observation:"}, IMAGE]}


def test_image_only_mode_sends_the_frame_and_one_instruction_instead_of_any_text_view(server):
    messages = sent_messages(server, image_only_mode=True)
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": FRAME_INSTRUCTION}, IMAGE]}
    assert messages[0] == HISTORY[0] and messages[2] == HISTORY[2] and messages[4] == HISTORY[4]
    assert messages[1]["content"] == EARLIER_FRAME
    # What was wrong with the model's call is not a view: its first line stays.
    assert messages[3]["content"] == f"Error: unknown action 'fly'\n{EARLIER_FRAME}"
    assert "Map (5x5" not in str(messages)


def test_in_json_mode_the_frame_goes_with_the_rewritten_history(server):
    messages = sent_messages(server, use_vision=True, tool_mode="json")
    assert "## Tools" in messages[0]["content"] and all("tool_calls" not in m for m in messages)
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": VIEW}, IMAGE]}


def test_without_use_vision_a_frame_is_not_sent(server):
    assert sent_messages(server) == HISTORY


def test_use_vision_without_a_frame_sends_the_text_and_says_so_once(server, caplog):
    server.script(*[Reply(payload("vllm_tool_call_write_file"))] * 2)
    policy = fast_policy(server, use_vision=True)
    with caplog.at_level(logging.WARNING, logger="proofgym.policies"):
        for turn in (1, 2):
            assert act(policy, request(messages=HISTORY, turn=turn)).error is None
    assert [r.body["messages"] for r in server.requests] == [HISTORY, HISTORY]
    [warning] = caplog.records
    assert "use_vision" in warning.getMessage() and "no frame (data.image_png_base64)" in warning.getMessage()


def test_image_only_mode_without_a_frame_ends_the_session_and_calls_no_model(server):
    reply = act(fast_policy(server, image_only_mode=True), request(messages=HISTORY, turn=3))
    assert reply.unavailable and reply.action is None
    assert reply.error.startswith("image_only_mode: the observation of turn 3 carries no frame")
    assert server.requests == []


def test_the_vision_keys_are_openai_policy_config_keys():
    policy = build_policy("openai", {"model": "m", "inference_url": "http://127.0.0.1:9/v1", "image_only_mode": True})
    assert policy.use_vision and policy.image_only_mode and "image_only_mode=True" in repr(policy)
    with pytest.raises(ConfigError, match="use_vision"):
        build_policy("openai", {"model": "m", "inference_url": "http://127.0.0.1:9/v1", "use_vision": "yes"})
