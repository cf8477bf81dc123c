"""Transient failures are retried with backoff (Retry-After honoured); anything else fails at once; nothing raises."""

import socket
import time

from _bounds import CUT_OFF_S

from ._server import Reply, payload
from ._support import act, fast_policy


def test_429_then_200_waits_for_retry_after_and_succeeds(server):
    server.script(Reply(payload("openai_rate_limit_429"), status=429, headers={"Retry-After": "0.4"}),
                  Reply(payload("openai_tool_call_compile")))
    reply = act(fast_policy(server))
    assert reply.error is None and reply.action["function"]["name"] == "compile"
    first, second = server.requests
    assert second.at - first.at >= 0.4
    assert [c.error for c in reply.lm_calls][1] is None
    assert reply.lm_calls[0].error.startswith("HTTP 429: Rate limit reached")
    assert reply.lm_calls[0].response["status"] == 429


def test_500_until_retries_run_out_is_an_unavailable_reply(server):
    server.script(*[Reply(payload("vllm_internal_error_500"), status=500)] * 3)
    reply = act(fast_policy(server, max_retries=2))
    assert reply.action is None and reply.unavailable
    assert reply.error.startswith("HTTP 500: CUDA out of memory") and "after 3 attempts" in reply.error
    assert len(server.requests) == 3 and len(reply.lm_calls) == 3


def test_a_timeout_is_retried_then_reported(server):
    server.script(Reply(payload("openai_tool_call_compile"), delay_s=60), Reply(payload("openai_tool_call_compile"),
                                                                                delay_s=60))
    started = time.monotonic()
    reply = act(fast_policy(server, timeout_s=0.3, max_retries=1))
    assert time.monotonic() - started < CUT_OFF_S  # the replies would take 60 s each
    assert reply.unavailable and "no response within 0.3 s" in reply.error
    assert len(reply.lm_calls) == 2 and all(c.latency_s < 1.5 for c in reply.lm_calls)


def test_a_client_error_is_not_retried(server):
    server.script(Reply(payload("openai_invalid_api_key_401"), status=401), Reply(payload("openai_tool_call_compile")))
    reply = act(fast_policy(server))
    assert reply.unavailable and reply.error.startswith("HTTP 401: Incorrect API key provided")
    assert len(server.requests) == 1


def test_a_body_that_is_not_json_is_an_unavailable_reply_without_retry(server):
    server.script(Reply(text='{"id": "chatcmpl-1", "choices": [{"message": {"content": "hi"'))
    reply = act(fast_policy(server))
    assert reply.unavailable and "not a JSON object" in reply.error and len(server.requests) == 1


def test_a_json_body_without_choices_is_an_unavailable_reply(server):
    server.script(Reply({"id": "chatcmpl-1", "object": "chat.completion", "choices": []}))
    reply = act(fast_policy(server))
    assert reply.unavailable and "choices[0].message" in reply.error


def test_a_refused_connection_is_retried_then_reported():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens once the probe closes

    class Closed:
        base_url = f"http://127.0.0.1:{port}"

    reply = act(fast_policy(Closed(), max_retries=2))
    assert reply.unavailable and "ConnectError" in reply.error and len(reply.lm_calls) == 3
