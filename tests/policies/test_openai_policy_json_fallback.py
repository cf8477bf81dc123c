"""JSON in text: when the server rejects tools, or by choice; exactly one call, or the answer when text is allowed."""

from proofgym.policies import PolicyRequest

from ._server import Reply, payload, with_content
from ._support import MESSAGES, act, fast_policy, request


def test_auto_falls_back_to_json_in_text_when_the_server_rejects_tools_and_stays_there(server):
    server.script(Reply(payload("vllm_tools_unsupported_400"), status=400),
                  Reply(payload("vllm_json_call_in_text")),
                  Reply(payload("vllm_json_call_in_text")))
    policy = fast_policy(server)

    async def two_turns():
        try:
            return [await policy.act(request()), await policy.act(request(turn=2))]
        finally:
            await policy.aclose()

    import asyncio

    first, second = asyncio.run(two_turns())
    assert first.action == second.action == {"tool": "compile", "args": {}}
    assert not policy.native_tools
    rejected, retried, later = (r.body for r in server.requests)
    assert "tools" in rejected and "tools" not in retried and "tools" not in later
    system = retried["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You design hardware.")
    assert '{"tool": "<tool name>", "args": {<arguments>}}' in system["content"]
    assert "- write_file(path: string, content: string)" in system["content"]
    # Both calls are in the trace: the rejection (with its error) and the answer.
    assert [c.error is not None for c in first.lm_calls] == [True, False]
    assert "HTTP 400" in first.lm_calls[0].error and "tool" in first.lm_calls[0].error


def test_native_mode_does_not_fall_back(server):
    server.script(Reply(payload("vllm_tools_unsupported_400"), status=400))
    reply = act(fast_policy(server, tool_mode="native"))
    assert reply.unavailable and "HTTP 400" in reply.error and len(server.requests) == 1


def test_json_mode_never_sends_tools_and_rewrites_native_history_as_text(server):
    server.script(Reply(payload("vllm_json_call_in_text")))
    history = [*MESSAGES,
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "compile", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "Compile succeeded."}]
    reply = act(fast_policy(server, tool_mode="json"), request(messages=history, turn=2))
    assert reply.action == {"tool": "compile", "args": {}}
    sent = server.requests[0].body
    assert "tools" not in sent
    assert sent["messages"][2] == {"role": "assistant", "content": '{"tool": "compile", "args": {}}'}
    assert sent["messages"][3] == {"role": "user", "content": "Tool result:\nCompile succeeded."}
    assert all("tool_calls" not in m and m["role"] != "tool" for m in sent["messages"])


def test_a_reply_cut_off_mid_call_is_an_error_for_the_agent_saying_so(server):
    server.script(Reply(payload("vllm_cut_off_json_call")))
    reply = act(fast_policy(server, tool_mode="json"))
    assert reply.action is None and not reply.unavailable
    assert "no tool call found" in reply.error and "cut off at max_tokens" in reply.error
    assert reply.message == {"role": "assistant", "content": payload("vllm_cut_off_json_call")["choices"][0][
        "message"]["content"]}


def test_garbage_text_is_an_error_for_the_agent_not_a_crash(server):
    server.script(Reply(with_content("vllm_text_answer", '{"tool": "compile", "args": {]}} }}} {"tool"')))
    reply = act(fast_policy(server, tool_mode="json"))
    assert reply.action is None and not reply.unavailable and "no tool call found" in reply.error


def test_two_json_calls_are_an_error(server):
    server.script(Reply(with_content("vllm_text_answer", '{"tool": "compile", "args": {}}\n{"tool": "submit"}')))
    reply = act(fast_policy(server, tool_mode="json"))
    assert reply.action is None and "2 tool calls" in reply.error


def test_when_the_environment_takes_text_a_reply_without_a_call_is_the_answer(server):
    server.script(Reply(payload("vllm_text_answer")), Reply(payload("vllm_text_answer")))
    answer = payload("vllm_text_answer")["choices"][0]["message"]["content"]
    text_env = request(accepts_text=True)
    assert act(fast_policy(server), text_env).action == answer
    reply = act(fast_policy(server), PolicyRequest(messages=list(MESSAGES), tools=request().tools))
    assert reply.action is None and "no tool call found" in reply.error
