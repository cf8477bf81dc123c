"""The endpoint URL (query string kept for trace correlation), headers, request options and their validation."""

import pytest

from proofgym.policies import OpenAIChatPolicy

from ._server import Reply, payload
from ._support import act, fast_policy, request


@pytest.mark.parametrize("bad", ["", "localhost:8000/v1", "ftp://h/v1", "http:///v1", None])
def test_an_inference_url_that_is_not_http_is_refused(bad):
    with pytest.raises(ValueError, match="inference_url"):
        OpenAIChatPolicy("m", bad)


def test_the_correlation_id_reaches_the_server_in_the_query(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    policy = OpenAIChatPolicy("m", f"{server.base_url}/v1?cid=trace_abc123")
    act(policy)
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions" and sent.query == "cid=trace_abc123"


def test_the_api_key_is_a_bearer_header_and_extra_body_is_merged(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    act(fast_policy(server, api_key="sk-test-123", top_p=0.9,
                    extra_body={"seed": 7, "chat_template_kwargs": {"enable_thinking": False}}))
    [sent] = server.requests
    assert sent.headers["authorization"] == "Bearer sk-test-123"
    assert sent.body["seed"] == 7 and sent.body["chat_template_kwargs"] == {"enable_thinking": False}
    assert sent.body["top_p"] == 0.9
    assert "sk-test-123" not in str(sent.body)


@pytest.mark.parametrize("options, message", [
    ({"temperature": -1}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"top_p": 0}, "top_p"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"max_retries": -1}, "max_retries"),
    ({"tool_mode": "xml"}, "tool_mode"),
    ({"extra_body": {"model": "other"}}, "extra_body must not set"),
    ({"extra_body": {"stream": True}}, "extra_body must not set"),
    ({"extra_body": {"x": object()}}, "JSON-serialisable"),
])
def test_invalid_options_are_refused_naming_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        OpenAIChatPolicy("m", "http://127.0.0.1:1/v1", **options)


def test_a_client_passed_in_is_used_and_left_open(server):
    import asyncio

    import httpx

    server.script(Reply(payload("openai_tool_call_compile")))

    async def main():
        async with httpx.AsyncClient() as client:
            policy = fast_policy(server, client=client)
            reply = await policy.act(request())
            await policy.aclose()
            assert not client.is_closed
            return reply

    assert asyncio.run(main()).action["function"]["name"] == "compile"


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_one_policy_serves_several_event_loops(server):
    import asyncio
    import gc

    server.script(Reply(payload("openai_tool_call_compile")), Reply(payload("openai_tool_call_compile")))
    policy = fast_policy(server)
    first = asyncio.run(policy.act(request()))

    async def again():
        try:
            return await policy.act(request())  # the first loop's client went with its loop
        finally:
            await policy.aclose()

    second = asyncio.run(again())
    assert first.action == second.action and second.error is None
    gc.collect()  # the first loop's connections were never closed (no aclose on that loop): collect them here
