"""Native tool calls: the tools go in the request, the one call in the reply is the action, usage is recorded."""

import json

from ._server import Reply, payload
from ._support import TOOLS, act, fast_policy, request


def test_a_vllm_tool_call_is_the_action_and_the_call_is_recorded(server):
    server.script(Reply(payload("vllm_tool_call_write_file")))
    reply = act(fast_policy(server, temperature=0.7, max_tokens=300))
    assert reply.error is None and not reply.unavailable
    assert reply.action["type"] == "function" and reply.action["function"]["name"] == "write_file"
    assert json.loads(reply.action["function"]["arguments"])["path"] == "top.v"
    assert reply.message["role"] == "assistant" and reply.message["tool_calls"] == [reply.action]
    [call] = reply.lm_calls
    assert (call.prompt_tokens, call.completion_tokens) == (612, 59)
    assert call.latency_s > 0 and call.error is None and call.model == "Qwen/Qwen3-0.6B"
    assert call.response["id"] == "chatcmpl-8f3a2c1e9b7d4f6a8c2e1b3d5f7a9c0e"
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["tools"] == TOOLS and sent.body["model"] == "Qwen/Qwen3-0.6B"
    assert sent.body["temperature"] == 0.7 and sent.body["max_tokens"] == 300
    assert sent.body["messages"] == request().messages
    assert call.request == sent.body


def test_an_openai_tool_call_with_empty_arguments(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    reply = act(fast_policy(server))
    assert reply.action == {"type": "function", "id": "call_Xy12AbCdEfGh34IjKlMn56Op",
                            "function": {"name": "compile", "arguments": "{}"}}
    assert (reply.lm_calls[0].prompt_tokens, reply.lm_calls[0].completion_tokens) == (583, 11)


def test_two_tool_calls_in_one_reply_are_an_error_for_the_agent_not_an_outage(server):
    server.script(Reply(payload("vllm_two_tool_calls")))
    reply = act(fast_policy(server))
    assert reply.action is None and not reply.unavailable
    assert "2 tool calls" in reply.error
    # The history stays valid for the next request: no tool call is left without its result.
    assert "tool_calls" not in reply.message and "compile" in reply.message["content"]


def test_a_text_reply_in_auto_mode_is_read_as_a_json_call(server):
    server.script(Reply(payload("vllm_json_call_in_text")))
    policy = fast_policy(server)
    reply = act(policy)
    assert reply.action == {"tool": "compile", "args": {}} and reply.error is None
    assert policy.native_tools  # a text reply is no proof the server lacks tools


def test_without_tools_the_request_has_no_tools_and_the_text_is_the_action(server):
    server.script(Reply(payload("vllm_text_answer")))
    reply = act(fast_policy(server), request(tools=[]))
    assert reply.action.startswith("<reasoning>") and reply.error is None
    assert "tools" not in server.requests[0].body
