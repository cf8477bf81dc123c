"""serve-model's streamed chat completions (``"stream": true``) over the tiny offline model: OpenAI's SSE framing,
the text, token ids and logprobs equal to the non-streamed reply for the same seed, the usage chunk, tool calls, n,
errors before and after the stream starts, tokens sent while the rest decodes, and a client that leaves; through the
real ``openai`` client as well as raw."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

import httpx
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import openai  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from _sse import assembled, events, stream_raw  # noqa: E402
from _threaded_server import ThreadedServer  # noqa: E402
from proofgym.model_server import GenerationBackend, LoadedModel, create_model_app  # noqa: E402

from ._support import KEY, LIMIT, PROMPT, TOOLS  # noqa: E402



@pytest.fixture(scope="module")
def server(backend):
    with ThreadedServer(create_model_app(backend, api_key=KEY, max_tokens_limit=LIMIT), what="serve-model") as server:
        yield server


def reply(client, **body):
    body.setdefault("messages", PROMPT)
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def streamed(client, **body):
    body.setdefault("messages", PROMPT)
    return stream_raw(client, **body)


def test_events_are_openai_chunks_role_first_usage_last_then_done(client):
    body = {"temperature": 1.0, "seed": 4, "n": 2, "max_tokens": 12}
    whole = reply(client, **body)
    chunks = events(streamed(client, stream_options={"include_usage": True}, **body))
    assert len({chunk["id"] for chunk in chunks}) == 1 and chunks[0]["id"].startswith("chatcmpl-")
    assert {(chunk["object"], chunk["model"]) for chunk in chunks} == {("chat.completion.chunk", "proofgym:tiny")}
    assert len({chunk["created"] for chunk in chunks}) == 1
    for index, first in enumerate(chunks[:2]):  # the role of each choice, and the prompt's token ids (as vLLM)
        assert first["choices"] == [{"index": index, "delta": {"role": "assistant", "content": ""},
                                     "logprobs": None, "finish_reason": None}]
        assert first["prompt_token_ids"] == whole["choices"][0]["prompt_token_ids"]
        assert first["proofgym"] == {"cid": None}
    *body_chunks, usage = chunks
    assert all(len(chunk["choices"]) == 1 and chunk["usage"] is None for chunk in body_chunks)
    assert usage["choices"] == [] and usage["usage"] == whole["usage"]
    choices = assembled(body_chunks)
    assert [choice["role"] for choice in choices] == ["assistant", "assistant"]
    assert all(choice["finish_reason"] in ("stop", "length") for choice in choices)


def test_without_include_usage_no_chunk_has_usage(client):
    chunks = events(streamed(client, temperature=0, max_tokens=6))
    assert all("usage" not in chunk and chunk["choices"] for chunk in chunks)


@pytest.mark.parametrize("body", [
    {"temperature": 0, "max_tokens": 20},
    {"temperature": 1.0, "seed": 7, "max_tokens": 30},
    {"temperature": 0.9, "top_p": 0.9, "seed": 11, "n": 3, "max_tokens": 16},
    {"temperature": 0, "n": 3, "max_tokens": 10},
    {"temperature": 1.0, "seed": 3, "max_tokens": 8, "logprobs": True, "top_logprobs": 2},
    {"temperature": 0, "max_tokens": 5, "logprobs": True},
], ids=["greedy", "sampled", "n3", "greedy-n3", "logprobs", "length"])
def test_streamed_choices_equal_the_reply_for_the_same_seed(client, body):
    whole = reply(client, **body)
    choices = assembled(events(streamed(client, **body)))
    assert len(choices) == len(whole["choices"]) == body.get("n", 1)
    for mine, theirs in zip(choices, whole["choices"]):
        assert mine["content"] == theirs["message"]["content"]
        assert mine["token_ids"] == theirs["token_ids"]
        assert mine["finish_reason"] == theirs["finish_reason"]
        assert mine["logprobs"] == (theirs["logprobs"] or {}).get("content")


def test_a_stop_string_cuts_the_streamed_text_where_it_cuts_the_reply(client):
    free = reply(client, temperature=1.0, seed=5, max_tokens=24)["choices"][0]["message"]["content"]
    for stop in (free[6:9], free[10:12], [free[15:17], "\x00never"]):
        whole = reply(client, temperature=1.0, seed=5, max_tokens=24, stop=stop)["choices"][0]
        assert whole["finish_reason"] == "stop"
        (mine,) = assembled(events(streamed(client, temperature=1.0, seed=5, max_tokens=24, stop=stop)))
        assert (mine["content"], mine["token_ids"], mine["finish_reason"]) == \
            (whole["message"]["content"], whole["token_ids"], "stop")


def test_the_openai_client_streams_the_same_text_and_usage(server):
    api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0)
    for sampling in ({"temperature": 0}, {"temperature": 1.0, "seed": 21}):
        whole = api.chat.completions.create(model="proofgym:tiny", messages=PROMPT, max_tokens=24, n=2, **sampling)
        text, finish, usage = {}, {}, []
        for chunk in api.chat.completions.create(model="proofgym:tiny", messages=PROMPT, max_tokens=24, n=2,
                                                 stream=True, stream_options={"include_usage": True}, **sampling):
            assert chunk.object == "chat.completion.chunk"
            for choice in chunk.choices:
                text[choice.index] = text.get(choice.index, "") + (choice.delta.content or "")
                finish[choice.index] = choice.finish_reason or finish.get(choice.index)
            if chunk.usage is not None:
                usage.append(chunk.usage)
        assert text == {choice.index: choice.message.content for choice in whole.choices}
        assert finish == {choice.index: choice.finish_reason for choice in whole.choices}
        assert usage == [whole.usage]


@pytest.fixture(scope="module")
def wide_server(wide_backend):
    with ThreadedServer(create_model_app(wide_backend, max_tokens_limit=256), what="serve-model wide") as server:
        yield server


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "submit"}}])
def test_a_tool_call_streams_as_delta_tool_calls(wide_server, tool_choice):
    api = openai.OpenAI(base_url=f"{wide_server.url}/v1", api_key="unused", max_retries=0)
    body = {"model": "tiny-wide", "messages": PROMPT, "tools": TOOLS, "tool_choice": tool_choice,
            "temperature": 0.8, "seed": 1, "max_tokens": 200}
    (whole,) = api.chat.completions.create(**body).choices
    assert whole.finish_reason == "tool_calls"
    calls, finish, content = {}, None, ""
    for chunk in api.chat.completions.create(**body, stream=True):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": None, "type": None, "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                entry["type"] = call.type or entry["type"]
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
    assert finish == "tool_calls" and content == ""
    (call,) = calls.values()
    (expected,) = whole.message.tool_calls
    assert call["id"].startswith("call_") and call["type"] == "function"
    assert (call["name"], json.loads(call["arguments"])) == (expected.function.name,
                                                            json.loads(expected.function.arguments))


def test_a_reply_offered_tools_that_is_no_call_streams_its_text(wide_server):
    body = {"messages": PROMPT, "tools": TOOLS, "temperature": 0, "max_tokens": 12}
    with httpx.Client(base_url=wide_server.url, timeout=60) as http:
        whole = http.post("/v1/chat/completions", json=body).json()["choices"][0]
        assert whole["finish_reason"] in ("stop", "length") and whole["message"]["content"]
        (mine,) = assembled(events(streamed(http, **body)))
    assert (mine["content"], mine["token_ids"], mine["finish_reason"], mine["tool_calls"]) == \
        (whole["message"]["content"], whole["token_ids"], whole["finish_reason"], [])


# -- errors ----------------------------------------------------------------------------------------------------

def test_errors_before_the_stream_are_json_with_their_status(client, backend):
    for body, status, param in (({"model": "gpt-4o"}, 404, "model"), ({"max_tokens": LIMIT + 1}, 400, "max_tokens"),
                                ({"temperature": 3}, 422, "temperature")):
        response = client.post("/v1/chat/completions", json={"messages": PROMPT, "stream": True, **body})
        assert response.status_code == status and response.headers["content-type"] == "application/json"
        assert response.json()["error"]["param"] == param
    busy = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "busy", 128), max_queued=2)
    with TestClient(create_model_app(busy)) as busy_client:
        response = busy_client.post("/v1/chat/completions", json={"messages": PROMPT, "stream": True, "n": 3})
        assert response.status_code == 503 and response.json()["error"]["type"] == "server_error"
        assert len(assembled(events(streamed(busy_client, n=2, max_tokens=2)))) == 2  # and it still serves
    busy.close()


def _failing(backend, at_step):
    """A backend over the fixture's model whose ``at_step``-th decoding step of each batch fails."""
    failing = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "failing", backend.context_length),
                                batch_window_ms=0)
    failing.eos_token_ids = []
    step, decode, count = failing._step, failing._decode, [0]

    def maybe_fail(rows, logits):
        count[0] += 1
        if count[0] == at_step:
            raise RuntimeError("the model broke")
        return step(rows, logits)

    def batch(rows):
        count[0] = 0
        return decode(rows)

    failing._step, failing._decode = maybe_fail, batch
    return failing


def test_a_failure_before_the_first_token_is_a_500_and_after_it_an_error_event(backend):
    failing = _failing(backend, at_step=1)
    with TestClient(create_model_app(failing), raise_server_exceptions=False) as http:
        response = http.post("/v1/chat/completions", json={"messages": PROMPT, "stream": True, "max_tokens": 8})
        assert response.status_code == 500 and response.json()["error"]["type"] == "server_error"
    failing.close()
    failing = _failing(backend, at_step=4)
    with ThreadedServer(create_model_app(failing), what="failing") as server:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            raw = streamed(http, max_tokens=8, temperature=0)
        assert raw.endswith('data: {"error":{"message":"the server failed: RuntimeError","type":"server_error",'
                            '"param":null,"code":null}}\n\ndata: [DONE]\n\n')
        api = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.APIError, match="the server failed"):
            for _ in api.chat.completions.create(model="failing", messages=PROMPT, max_tokens=8, stream=True):
                pass
    failing.close()


# -- streaming as it decodes, and a client that leaves -------------------------------------------------------

def _gated(backend, *, pause_at):
    """A backend over the fixture's model (rows stop only at max_tokens, one at a time) whose decoding waits at step
    ``pause_at`` until ``gate`` is set; ``steps`` counts the steps taken."""
    gated = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "gated", backend.context_length),
                              batch_window_ms=0, continuous=False)
    gated.eos_token_ids = []
    gated.gate, gated.steps = threading.Event(), [0]
    step = gated._step

    def wait_at_the_gate(rows, logits):
        gated.steps[0] += 1
        if gated.steps[0] == pause_at:
            assert gated.gate.wait(60), "the test never opened the gate"
        return step(rows, logits)

    gated._step = wait_at_the_gate
    return gated


def _data_lines(response):
    for line in response.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[len("data: "):])


def test_content_is_sent_while_the_rest_is_still_decoding(backend):
    gated = _gated(backend, pause_at=12)
    body = {"messages": PROMPT, "stream": True, "temperature": 1.0, "seed": 2, "max_tokens": 20}
    with ThreadedServer(create_model_app(gated), what="gated") as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        with http.stream("POST", "/v1/chat/completions", json=body) as response:
            received, chunks = [], _data_lines(response)
            for chunk in chunks:
                received.append(chunk)
                if chunk["choices"][0]["delta"].get("content"):
                    break
            # Text has come while the decode cannot be past step 12 of 20 (it waits there for the gate).
            assert not gated.gate.is_set() and gated.steps[0] <= 12
            assert sum(len(chunk["choices"][0].get("token_ids", [])) for chunk in received) < 12
            gated.gate.set()
            received += list(chunks)
        whole = http.post("/v1/chat/completions", json={**body, "stream": False}).json()["choices"][0]
    (mine,) = assembled(received)
    assert (mine["content"], mine["token_ids"]) == (whole["message"]["content"], whole["token_ids"])
    gated.close()


def test_a_client_that_leaves_mid_stream_has_its_rows_dropped(backend):
    gated = _gated(backend, pause_at=3)
    cancelled = threading.Event()
    generate = gated.generate

    async def watched(*args, **kwargs):
        try:
            return await generate(*args, **kwargs)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    gated.generate = watched
    body = {"messages": PROMPT, "stream": True, "temperature": 1.0, "seed": 2, "max_tokens": LIMIT, "n": 2}
    with ThreadedServer(create_model_app(gated, max_tokens_limit=LIMIT), what="gated") as server:
        with httpx.Client(base_url=server.url, timeout=60) as http, \
                http.stream("POST", "/v1/chat/completions", json=body) as response:
            next(_data_lines(response))  # the stream has started; the client goes
        assert cancelled.wait(10), "the stream's generation kept running after its client left"
        gated.gate.set()
        with httpx.Client(base_url=server.url, timeout=60) as http:  # answered once the abandoned batch is over
            assert len(http.post("/v1/chat/completions", json={"messages": PROMPT, "max_tokens": 2}).json()
                       ["choices"][0]["token_ids"]) == 2
    assert gated.steps[0] < 3 + 2 + 2  # the abandoned rows stopped at the step after the gate, not at LIMIT
    gated.close()


def test_the_cid_rides_on_the_role_chunks_and_in_the_log_line(client, caplog):
    with caplog.at_level(logging.INFO, logger="proofgym.model_server"):
        chunks = events(stream_raw(client, "/v1/chat/completions?cid=run-3%2Fstep-1", messages=PROMPT,
                                   temperature=0, max_tokens=3))
    assert chunks[0]["proofgym"] == {"cid": "run-3/step-1"}
    assert any("cid=run-3/step-1" in record.getMessage() and "(streamed)" in record.getMessage()
               for record in caplog.records)


@pytest.mark.parametrize("body", [{"temperature": 1.0, "seed": 9, "max_tokens": 20},
                                  {"tools": TOOLS, "tool_choice": "required", "temperature": 0.8, "seed": 1,
                                   "max_tokens": 200}], ids=["text", "tool-call"])
def test_vf_evals_stream_parser_assembles_the_reply(wide_server, body):
    """verifiers 0.4's interception server reads vf-eval's streamed turns with its chat dialect's parser: it
    assembles ours into the non-streamed reply (content or tool call, finish reason, usage)."""
    pytest.importorskip("verifiers")
    from verifiers.v1.dialects.chat import ChatDialect

    body = {"messages": PROMPT, **body}
    with httpx.Client(base_url=wide_server.url, timeout=120) as http:
        whole = http.post("/v1/chat/completions", json=body).json()
        raw = stream_raw(http, stream_options={"include_usage": True}, **body)
    parser = ChatDialect().stream_parser()
    for event in raw.split("\n\n")[:-1]:
        parser.feed(f"{event}\n\n".encode())
    got = parser.finish().raw
    (expected,) = whole["choices"]
    assert got["choices"][0]["finish_reason"] == expected["finish_reason"]
    assert got["usage"] == whole["usage"]
    message = got["choices"][0]["message"]
    if expected["finish_reason"] == "tool_calls":
        ((call,), (theirs,)) = message["tool_calls"], expected["message"]["tool_calls"]
        assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == \
            (theirs["function"]["name"], json.loads(theirs["function"]["arguments"]))
    else:
        assert message["content"] == expected["message"]["content"]
