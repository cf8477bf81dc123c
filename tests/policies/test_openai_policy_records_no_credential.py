"""What the OpenAI policy records of a call (its ``LMCallEvent``) holds no credential: ``extra_body``'s are sent as
given and recorded as ``***``, the API key (a header) is not part of the record, and a server's error that echoes
the request (FastAPI's own 422 repeats every refused input) has them taken out of the error and the response."""

from __future__ import annotations

from typing import Any

from _threaded_server import ThreadedServer
from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

from proofgym.policies import OpenAIChatPolicy

from ._server import Reply, payload
from ._support import act, fast_policy

SECRET = "S3cr3t-value"
EXTRA = {"authorization": f"Bearer {SECRET}", "chat_template_kwargs": {"enable_thinking": False},
         "metadata": {"headers": {"X-API-Key": SECRET}, "callback": f"https://u:{SECRET}@hook.example/x"}}


def test_credentials_in_extra_body_are_sent_and_recorded_as_stars(server):
    server.script(Reply(payload("openai_tool_call_compile")))
    reply = act(fast_policy(server, api_key=SECRET, extra_body=EXTRA))
    [sent] = server.requests
    assert sent.body["authorization"] == f"Bearer {SECRET}" and sent.headers["authorization"] == f"Bearer {SECRET}"
    [call] = reply.lm_calls
    assert call.request["authorization"] == "***" and call.request["chat_template_kwargs"] == {"enable_thinking": False}
    assert call.request["metadata"] == {"headers": {"X-API-Key": "***"}, "callback": "https://***@hook.example/x"}
    assert call.request["messages"] == sent.body["messages"] and SECRET not in repr(reply)


class _ChatRequest(BaseModel):
    """An inference server that refuses keys it does not know, answering with FastAPI's own 422."""

    model_config = ConfigDict(extra="forbid")
    model: str
    messages: list[Any]
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[Any] | None = None


def test_a_server_error_that_echoes_the_request_is_recorded_without_its_credentials():
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(body: _ChatRequest) -> dict[str, Any]:
        return {}

    with ThreadedServer(app, what="a strict inference server", lifespan="off") as strict:
        reply = act(OpenAIChatPolicy("m", f"{strict.url}/v1", extra_body=EXTRA, max_retries=0))
    assert reply.error is not None and "HTTP 422" in reply.error
    assert reply.lm_calls and all(call.error and "HTTP 422" in call.error for call in reply.lm_calls)
    assert all(call.response["status"] == 422 for call in reply.lm_calls)
    assert SECRET not in repr(reply)
