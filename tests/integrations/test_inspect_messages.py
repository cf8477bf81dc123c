"""The OpenAI <-> inspect_ai conversion: every environment's tools and proofgym's own assistant messages come back
exactly as they went in, a completion's tool call reads as the same action through inspect as straight from the
server, and an answer without usage gets zero counts (so inspect never counts tokens itself)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser  # noqa: E402
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams  # noqa: E402

from proofgym.envs import env_names, make  # noqa: E402
from proofgym.integrations._inspect_messages import (  # noqa: E402
    chat_completion,
    inspect_messages,
    inspect_tool,
    model_output,
    openai_messages,
    openai_tool,
)
from proofgym.policies import PolicyRequest, read_chat_reply  # noqa: E402

QUICK = [name for name in env_names() if name != "crafter"]


@pytest.mark.parametrize("name", QUICK)
def test_every_environment_tool_round_trips_exactly(name):
    with make(name) as env:
        tools = [dict(tool) for tool in env.tools]
    back = [openai_tool(inspect_tool(tool)) for tool in tools]
    assert json.dumps(back) == json.dumps(tools)  # same keys in the same order: the same prompt


def test_a_tool_made_in_inspect_becomes_an_openai_function_tool():
    tool = ToolInfo(name="lookup", description="Look a fact up.",
                    parameters=ToolParams(properties={"key": ToolParam(type="string")}, required=["key"]))
    assert openai_tool(tool) == {"type": "function", "function": {
        "name": "lookup", "description": "Look a fact up.",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"],
                       "additionalProperties": False}}}


def test_a_conversation_with_a_native_tool_call_round_trips_exactly():
    messages = [
        {"role": "system", "content": "You design hardware."},
        {"role": "user", "content": "Write top.v."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "id": "call_1",
             "function": {"name": "write_file", "arguments": '{"path":"top.v","content":"module m; endmodule"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "wrote top.v (20 bytes)"},
        {"role": "user", "content": "Error: call one tool per turn"},
    ]
    converted = inspect_messages(messages)
    assert [type(message) for message in converted[2:4]] == [ChatMessageAssistant, ChatMessageTool]
    assert converted[2].tool_calls[0].arguments == {"path": "top.v", "content": "module m; endmodule"}
    assert openai_messages(converted) == messages


def test_messages_made_in_inspect_become_openai_messages():
    from inspect_ai.tool import ToolCall

    messages = [ChatMessageUser(content="hi"),
                ChatMessageAssistant(content="", tool_calls=[ToolCall(id="c", function="answer",
                                                                      arguments={"completion": "é"})]),
                ChatMessageTool(content="scored", tool_call_id="c", function="answer")]
    assert openai_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "answer", "arguments": '{"completion": "é"}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": "scored"}]


def test_a_tool_call_reads_as_the_same_action_through_inspect_as_from_the_server():
    arguments = json.dumps({"completion": '<decision>{"classification": "deny"}</decision>'})
    payload = {"model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "", "tool_calls": [{"id": "call_9", "type": "function", "function": {
            "name": "answer", "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
    with make("loan") as env:
        request = PolicyRequest(messages=[{"role": "user", "content": env.reset(0).text}],
                                tools=[dict(tool) for tool in env.tools], accepts_text=True)
    output = model_output(payload, "m")
    assert output.stop_reason == "tool_calls" and output.message.tool_calls[0].function == "answer"
    assert (output.usage.input_tokens, output.usage.output_tokens, output.usage.total_tokens) == (11, 7, 18)
    direct = read_chat_reply(payload, request)
    through_inspect = read_chat_reply(chat_completion(output), request)
    assert through_inspect.action == direct.action and through_inspect.message == direct.message
    assert direct.error is None and direct.action["function"]["name"] == "answer"


def test_an_answer_without_usage_has_zero_counts_and_a_length_stop():
    output = model_output({"choices": [{"finish_reason": "length", "message": {"content": "cut"}}]}, "m")
    assert output.completion == "cut" and output.stop_reason == "max_tokens"
    assert (output.usage.input_tokens, output.usage.output_tokens) == (0, 0)
    assert chat_completion(output)["choices"][0]["finish_reason"] == "length"


def test_an_answer_without_choices_is_refused():
    with pytest.raises(ValueError, match="no choices"):
        model_output({"choices": []}, "m")
