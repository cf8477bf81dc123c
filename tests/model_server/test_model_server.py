"""proofgym serve-model over the tiny offline model: the OpenAI contract, every option, batching, errors, the key."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time

import httpx
import jsonschema
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from _threaded_server import ThreadedServer  # noqa: E402
from proofgym.model_server import GenerationBackend, LoadedModel, ServeError, create_model_app, load_model  # noqa: E402
from proofgym.model_server import serve_model  # noqa: E402
from proofgym.model_server._backend import ModelLoadError, SamplingParams, row_seed  # noqa: E402
from proofgym.model_server._server import _tool_call  # noqa: E402

from ._support import KEY, LIMIT, PROMPT, TOOLS  # noqa: E402

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]},
                                           "sure": {"type": "boolean"}},
          "required": ["answer", "sure"], "additionalProperties": False}


@pytest.fixture(scope="module")
def wide_client(wide_backend):
    with TestClient(create_model_app(wide_backend, max_tokens_limit=256)) as client:
        client.backend = wide_backend
        yield client


def chat(client, expect=200, query="", **body):
    body.setdefault("messages", PROMPT)
    response = client.post(f"/v1/chat/completions{query}", json=body)
    assert response.status_code == expect, response.text
    return response.json()


def error_of(client, status, body=None, **kwargs):
    response = client.post("/v1/chat/completions", json=body, **kwargs) if body is not None or not kwargs \
        else client.post("/v1/chat/completions", **kwargs)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    return error


# -- the contract ----------------------------------------------------------------------------------------------

def test_models_lists_the_served_model_and_health_needs_no_key(client, backend):
    models = client.get("/v1/models").json()
    assert models["object"] == "list"
    assert [card["id"] for card in models["data"]] == ["proofgym:tiny"]
    assert models["data"][0]["max_model_len"] == backend.context_length == 128
    assert client.get("/v1/models/proofgym:tiny").json()["id"] == "proofgym:tiny"
    assert TestClient(client.app).get("/health").json()["status"] == "ok"


def test_a_completion_has_openai_shape_usage_and_token_ids(client, backend):
    reply = chat(client, temperature=0, max_tokens=6)
    assert reply["object"] == "chat.completion" and reply["id"].startswith("chatcmpl-")
    assert reply["model"] == "proofgym:tiny"
    (choice,) = reply["choices"]
    assert choice["index"] == 0 and choice["message"]["role"] == "assistant"
    assert choice["finish_reason"] in ("stop", "length") and choice["logprobs"] is None
    expected_prompt = backend.encode("User: Applicant: age 30, income 5\n\nAssistant:")
    assert choice["prompt_token_ids"] == expected_prompt
    assert reply["usage"] == {"prompt_tokens": len(expected_prompt), "completion_tokens": len(choice["token_ids"]),
                              "total_tokens": len(expected_prompt) + len(choice["token_ids"])}


def test_greedy_reply_is_model_generate_greedy(client, backend):
    choice = chat(client, temperature=0, max_tokens=12)["choices"][0]
    prompt = torch.tensor([choice["prompt_token_ids"]])
    expected = backend.model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=12,
                                      do_sample=False)[0, prompt.shape[1]:].tolist()
    assert choice["token_ids"] == expected
    assert choice["message"]["content"] == backend.decode([t for t in expected if t not in backend.eos_token_ids])


def test_max_tokens_bounds_the_reply_and_length_is_reported(client):
    choice = chat(client, temperature=1.0, seed=1, max_tokens=5)["choices"][0]
    assert len(choice["token_ids"]) <= 5
    if len(choice["token_ids"]) == 5:
        assert choice["finish_reason"] == "length"


def test_default_max_tokens_stays_within_the_server_limit(client):
    assert len(chat(client, temperature=1.0, seed=2)["choices"][0]["token_ids"]) <= LIMIT


def test_seeded_sampling_is_reproducible_and_seeds_differ(client):
    first = chat(client, temperature=1.0, top_p=0.95, seed=7, max_tokens=16)["choices"][0]["token_ids"]
    again = chat(client, temperature=1.0, top_p=0.95, seed=7, max_tokens=16)["choices"][0]["token_ids"]
    other = chat(client, temperature=1.0, top_p=0.95, seed=8, max_tokens=16)["choices"][0]["token_ids"]
    assert first == again
    assert first != other


def test_top_p_near_zero_is_greedy(client):
    greedy = chat(client, temperature=0, max_tokens=10)["choices"][0]["token_ids"]
    assert chat(client, temperature=1.0, top_p=1e-9, seed=3, max_tokens=10)["choices"][0]["token_ids"] == greedy


def test_n_gives_that_many_choices_each_seeded_by_its_index(client):
    reply = chat(client, temperature=1.0, seed=11, n=3, max_tokens=10)
    assert [choice["index"] for choice in reply["choices"]] == [0, 1, 2]
    alone = chat(client, temperature=1.0, seed=11, max_tokens=10)["choices"][0]
    assert reply["choices"][0]["token_ids"] == alone["token_ids"]
    assert len({tuple(choice["token_ids"]) for choice in reply["choices"]}) == 3
    assert reply["usage"]["completion_tokens"] == sum(len(choice["token_ids"]) for choice in reply["choices"])


def test_greedy_choices_are_one_answer_decoded_once(client, backend):
    rows = backend.rows_decoded
    reply = chat(client, temperature=0, n=3, max_tokens=8)
    assert backend.rows_decoded - rows == 1
    assert [choice["index"] for choice in reply["choices"]] == [0, 1, 2]
    assert len({tuple(choice["token_ids"]) for choice in reply["choices"]}) == 1
    assert reply["usage"]["completion_tokens"] == 3 * len(reply["choices"][0]["token_ids"])


def test_stop_string_ends_the_reply_before_it(client):
    free = chat(client, temperature=1.0, seed=5, max_tokens=24)["choices"][0]
    text = free["message"]["content"]
    stop = text[6:9]
    assert len(stop) == 3
    for stops in (stop, [stop, "\x00never"]):
        choice = chat(client, temperature=1.0, seed=5, max_tokens=24, stop=stops)["choices"][0]
        assert choice["finish_reason"] == "stop"
        assert choice["message"]["content"] == text[:text.find(stop)]
        assert free["token_ids"][:len(choice["token_ids"])] == choice["token_ids"]


def test_logprobs_and_top_logprobs_follow_the_token_ids(client, backend):
    choice = chat(client, temperature=0, max_tokens=6, logprobs=True, top_logprobs=3)["choices"][0]
    content = choice["logprobs"]["content"]
    assert [entry["token_id"] for entry in content] == choice["token_ids"]
    for entry in content:
        assert entry["logprob"] <= 0 and len(entry["top_logprobs"]) == 3
        assert entry["top_logprobs"][0]["token_id"] == entry["token_id"]  # greedy takes the most likely token
        assert entry["bytes"] == list(entry["token"].encode("utf-8"))
    with torch.inference_mode():
        logits = backend.model(torch.tensor([choice["prompt_token_ids"]])).logits[0, -1]
    first = torch.log_softmax(logits.float(), -1)[choice["token_ids"][0]].item()
    assert content[0]["logprob"] == pytest.approx(first, abs=1e-4)
    plain = chat(client, temperature=0, max_tokens=3, logprobs=True)["choices"][0]["logprobs"]["content"]
    assert all(entry["top_logprobs"] == [] for entry in plain)


def test_cid_is_returned_and_logged(client, caplog):
    with caplog.at_level(logging.INFO, logger="proofgym.model_server"):
        reply = chat(client, query="?cid=run-7%2Fstep-3", temperature=0, max_tokens=2)
    assert reply["proofgym"] == {"cid": "run-7/step-3"}
    assert any("cid=run-7/step-3" in record.getMessage() for record in caplog.records)
    assert chat(client, temperature=0, max_tokens=2)["proofgym"] == {"cid": None}


# -- constrained decoding --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_json_schema_reply_parses_and_validates(client, seed):
    choice = chat(client, temperature=1.0, seed=seed, max_tokens=LIMIT,
                  response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}})["choices"][0]
    assert choice["finish_reason"] == "stop"
    jsonschema.validate(json.loads(choice["message"]["content"]), SCHEMA)


def test_json_object_reply_is_a_json_object(client):
    choice = chat(client, temperature=0.7, seed=4, max_tokens=LIMIT,
                  response_format={"type": "json_object"})["choices"][0]
    if choice["finish_reason"] == "stop":
        assert isinstance(json.loads(choice["message"]["content"]), dict)
    else:  # cut off at max_tokens: still the start of an object
        assert choice["message"]["content"].lstrip().startswith("{")


def test_unusable_schema_is_400(client):
    error = error_of(client, 400, {"messages": PROMPT, "response_format": {"type": "json_schema",
                                                                         "json_schema": {"schema": {"type": 5}}}})
    assert error["param"] == "response_format"


# -- tools -----------------------------------------------------------------------------------------------------

def test_tools_are_described_in_the_prompt_when_the_model_has_no_template(wide_client):
    choice = chat(wide_client, tools=TOOLS, temperature=0, max_tokens=4)["choices"][0]
    prompt = wide_client.backend.decode(choice["prompt_token_ids"])
    assert "## Tools" in prompt and "lookup(key: string (optional))" in prompt
    assert "plain text" in prompt  # tool_choice auto: the model may answer without a call
    plain = chat(wide_client, tools=TOOLS, tool_choice="none", temperature=0, max_tokens=4)["choices"][0]
    assert "## Tools" not in wide_client.backend.decode(plain["prompt_token_ids"])


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "submit"}}])
def test_required_tool_choice_returns_tool_calls(wide_client, tool_choice):
    choice = chat(wide_client, tools=TOOLS, tool_choice=tool_choice, temperature=0.8, seed=1,
                  max_tokens=200)["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice["message"]
    assert choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    names = ["submit"] if isinstance(tool_choice, dict) else ["lookup", "submit"]
    assert call["function"]["name"] in names
    assert isinstance(json.loads(call["function"]["arguments"]), dict)


def test_a_reply_holding_one_call_of_an_offered_tool_is_a_tool_call():
    names = ("lookup", "submit")
    call = _tool_call('I will look. {"tool": "lookup", "args": {"key": "age"}}', names)
    assert call["function"] == {"name": "lookup", "arguments": '{"key": "age"}'}
    hermes = _tool_call('<tool_call>{"name": "submit", "arguments": {"decision": "permit"}}</tool_call>', names)
    assert hermes["function"] == {"name": "submit", "arguments": '{"decision": "permit"}'}
    assert _tool_call('{"tool": "delete_all", "args": {}}', names) is None
    assert _tool_call('{"tool": "lookup", "args": {}} {"tool": "submit", "args": {}}', names) is None
    assert _tool_call("permit", names) is None


# -- batching --------------------------------------------------------------------------------------------------

def _rows(backend):
    prompts = ["Applicant: age 30, income 5", "hello", "x" * 30, "The grant rules say that an applicant with income 7"]
    ids = [backend.encode(backend.render([{"role": "user", "content": text}])) for text in prompts]
    params = [SamplingParams(max_tokens=20), SamplingParams(max_tokens=12, temperature=1.0, seed=row_seed(3, 0)),
              SamplingParams(max_tokens=16, temperature=0.7, top_p=0.9, seed=row_seed(4, 0), stop=("e",)),
              SamplingParams(max_tokens=8, top_logprobs=2)]
    return ids, params


def test_batched_rows_equal_the_same_rows_one_at_a_time(backend):
    ids, params = _rows(backend)

    async def run():
        alone = [(await backend.generate(prompt, [row]))[0] for prompt, row in zip(ids, params)]
        batches = backend.batches_decoded
        together = await asyncio.gather(*(backend.generate(prompt, [row]) for prompt, row in zip(ids, params)))
        return alone, [result for (result,) in together], backend.batches_decoded - batches

    alone, together, batches = asyncio.run(run())
    assert batches == 1  # the four requests were decoded as one batch
    for single, batched in zip(alone, together):
        assert batched.token_ids == single.token_ids
        assert batched.text == single.text and batched.finish_reason == single.finish_reason
    for single, batched in zip(alone[3].logprobs, together[3].logprobs):
        assert batched.logprob == pytest.approx(single.logprob, abs=1e-4)


def test_a_prefix_shared_with_the_last_prompt_is_not_run_again_and_answers_stay(backend):
    """Prompts that share a long prefix with the prompt run before them: its keys and values are copied from that
    run (counted), and the answers equal those of a backend that runs every prompt whole."""
    whole = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "whole", backend.context_length),
                              batch_window_ms=0, reuse_prefix=False)
    reusing = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "reuse", backend.context_length),
                                batch_window_ms=0)
    base = [{"role": "system", "content": "Decide from the facts given; answer yes or no."}]
    ids = [reusing.encode(reusing.render([*base, {"role": "user", "content": f"Applicant: age {age}, income 5"}]))
           for age in (30, 41, 52, 63)]
    params = [SamplingParams(max_tokens=6), SamplingParams(max_tokens=6, temperature=1.0, seed=3),
              SamplingParams(max_tokens=6, top_logprobs=2)]

    async def run(engine):
        sequential = [(await engine.generate(prompt, params))for prompt in ids[:2]]
        together = await asyncio.gather(*(engine.generate(prompt, params) for prompt in ids[2:]))
        return [result for results in [*sequential, *together] for result in results]

    try:
        expected, got = asyncio.run(run(whole)), asyncio.run(run(reusing))
    finally:
        whole.close()
        reusing.close()
    shared = len(os.path.commonprefix([ids[0], ids[1]]))
    assert shared > len(ids[1]) // 2 and reusing.prefix_tokens_reused >= shared * len(params)
    assert whole.prefix_tokens_reused == 0
    assert [result.token_ids for result in got] == [result.token_ids for result in expected]
    for mine, theirs in zip(got[2].logprobs, expected[2].logprobs):
        assert mine.logprob == pytest.approx(theirs.logprob, abs=1e-4)


def test_each_row_takes_its_own_prefix_from_the_prompts_kept_and_answers_stay(backend):
    """Conversations at different turns decoded in one batch: each row's prompt finds its own earlier turn among
    the prompts kept (a different length per row, one row with none), and the answers (sampled ones included) and
    logprobs equal a backend's that runs every prompt whole. A sync's :meth:`forget_prefix` empties the cache."""
    whole = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "whole", backend.context_length),
                              batch_window_ms=0, reuse_prefix=False)
    reusing = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "reuse", backend.context_length),
                                batch_window_ms=0)
    system = {"role": "system", "content": "Decide from the facts given; answer yes or no."}

    def talk(name, turns):
        messages = [system, {"role": "user", "content": f"Applicant {name}: age {len(name) * 11}"}]
        for turn in range(turns):
            messages += [{"role": "assistant", "content": f"ask income of {name}"},
                         {"role": "user", "content": f"income {turn * 7 + len(name)} thousand, resident"}]
        return reusing.encode(reusing.render(messages))

    first = [talk(name, 0) for name in ("Ada", "Grace", "Edsger")]
    later = [talk("Ada", 1), talk("Grace", 2), talk("Barbara", 0)]  # two carry on, one is new
    params = [SamplingParams(max_tokens=6, temperature=1.0, seed=5, top_logprobs=1)]

    async def run(engine):
        for prompt in first:
            await engine.generate(prompt, params)
        batches = engine.batches_decoded
        together = await asyncio.gather(*(engine.generate(prompt, params) for prompt in later))
        assert engine.batches_decoded == batches + 1  # one prefill of rows with different prefixes
        return [result for (result,) in together]

    try:
        expected, got = asyncio.run(run(whole)), asyncio.run(run(reusing))
        reused = reusing.prefix_tokens_reused
        kept = len(reusing.prefixes)
        reusing.forget_prefix()
        emptied = len(reusing.prefixes), reusing.prefixes.bytes
    finally:
        whole.close()
        reusing.close()
    ada = len(os.path.commonprefix([first[0], later[0]]))
    grace = len(os.path.commonprefix([first[1], later[1]]))
    assert ada > len(first[0]) // 2 and grace > len(first[1]) // 2
    assert reused >= ada + grace and kept == 6 and emptied == (0, 0)
    assert [result.token_ids for result in got] == [result.token_ids for result in expected]
    for mine, theirs in zip(got, expected):
        assert [t.logprob for t in mine.logprobs] == pytest.approx([t.logprob for t in theirs.logprobs], abs=1e-4)


def _slowed(backend, *, continuous):
    """A backend over the fixture's model whose rows stop only at max_tokens, each step slowed a little (so that a
    request sent meanwhile arrives while the batch decodes)."""
    slow = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "slow", backend.context_length),
                             batch_window_ms=0, continuous=continuous)
    slow.eos_token_ids = []
    step = slow._step

    def slowly(rows, logits):
        time.sleep(0.01)
        return step(rows, logits)

    slow._step = slowly
    return slow


@pytest.mark.parametrize("continuous", [True, False])
def test_a_request_sent_while_a_batch_decodes_joins_it_and_is_answered_as_alone(backend, continuous):
    slow = _slowed(backend, continuous=continuous)
    ids, params = _rows(backend)
    long = SamplingParams(max_tokens=100, temperature=1.0, seed=row_seed(9, 0), top_logprobs=1)
    short = [SamplingParams(max_tokens=6, top_logprobs=1),
             SamplingParams(max_tokens=5, temperature=0.8, top_p=0.9, seed=7, top_logprobs=1)]

    async def run():
        alone = [(await slow.generate(ids[0], [long]))[0]]
        alone += [(await slow.generate(prompt, [row]))[0] for prompt, row in zip(ids[2:], short)]
        batches, finished = slow.batches_decoded, []

        async def timed(prompt, row):
            result = (await slow.generate(prompt, [row]))[0]
            finished.append(row.max_tokens)
            return result

        first = asyncio.ensure_future(timed(ids[0], long))
        await asyncio.sleep(0.2)  # the long row is some 20 steps in
        later = await asyncio.gather(*(timed(prompt, row) for prompt, row in zip(ids[2:], short)))
        return alone, [await first, *later], slow.batches_decoded - batches, finished

    try:
        alone, together, batches, finished = asyncio.run(run())
    finally:
        slow.close()
    for single, batched in zip(alone, together):
        assert batched.token_ids == single.token_ids and batched.text == single.text
        # the same context: a cache or mask out of line with the joined rows would move these
        assert [t.logprob for t in batched.logprobs] == pytest.approx([t.logprob for t in single.logprobs], abs=1e-4)
    if continuous:  # joined the running batch: answered before the long row ends
        assert batches == 1 and finished[-1] == 100
    else:  # waited for it
        assert batches >= 2 and finished[0] == 100


def test_concurrent_http_requests_are_batched_and_answered_as_alone(backend):
    app = create_model_app(backend, max_tokens_limit=LIMIT)
    bodies = [{"messages": [{"role": "user", "content": f"case {i}"}], "max_tokens": 10 + i,
               "temperature": 0 if i % 2 else 1.0, "seed": i} for i in range(6)]
    with ThreadedServer(app, what="serve-model") as server, httpx.Client(base_url=server.url, timeout=60) as http:
        alone = [http.post("/v1/chat/completions", json=body).json()["choices"][0]["token_ids"] for body in bodies]
        before = backend.batches_decoded
        results: dict[int, list[int]] = {}
        barrier = threading.Barrier(len(bodies))

        def send(i):
            barrier.wait()
            results[i] = http.post("/v1/chat/completions", json=bodies[i]).json()["choices"][0]["token_ids"]

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [results[i] for i in range(len(bodies))] == alone
    assert backend.batches_decoded - before < len(bodies)


def test_a_client_that_leaves_has_its_generation_cancelled(backend, monkeypatch):
    started, cancelled = threading.Event(), threading.Event()

    async def endless(prompt_ids, params):  # a decode that outlasts the client's patience
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = create_model_app(backend, max_tokens_limit=LIMIT)
    with ThreadedServer(app, what="serve-model") as server:
        monkeypatch.setattr(backend, "generate", endless)
        with pytest.raises(httpx.ReadTimeout), httpx.Client(base_url=server.url, timeout=1.0) as http:
            http.post("/v1/chat/completions", json={"messages": PROMPT, "max_tokens": 5})
        assert started.is_set()
        assert cancelled.wait(10), "the abandoned generation kept running"
        monkeypatch.undo()
        with httpx.Client(base_url=server.url, timeout=60) as http:  # and the server answers the next one
            assert http.post("/v1/chat/completions", json={"messages": PROMPT, "max_tokens": 3}).status_code == 200


def test_generation_leaves_the_event_loop_free(backend):
    prompt = backend.encode(backend.render(PROMPT))

    async def run():
        ticks = 0
        task = asyncio.ensure_future(backend.generate(prompt, [SamplingParams(max_tokens=60)] * 4))
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.001)
        await task
        return ticks

    assert asyncio.run(run()) > 5


def test_a_full_queue_is_503(backend):
    busy = GenerationBackend(LoadedModel(backend.model, backend.tokenizer, "busy", 128), max_queued=2)
    with TestClient(create_model_app(busy)) as client:
        error = error_of(client, 503, {"messages": PROMPT, "n": 3, "max_tokens": 2})
        assert error["type"] == "server_error"
        assert len(chat(client, n=2, max_tokens=2)["choices"]) == 2
    busy.close()


# -- errors ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, status, param", [
    ({"messages": []}, 422, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, 422, "messages.0.role"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, 422,
     "messages.0.content"),
    ({"messages": PROMPT, "temperature": 3}, 422, "temperature"),
    ({"messages": PROMPT, "temperature": "hot"}, 422, "temperature"),
    ({"messages": PROMPT, "top_p": 0}, 422, "top_p"),
    ({"messages": PROMPT, "n": 0}, 422, "n"),
    ({"messages": PROMPT, "n": 1000}, 422, "n"),
    ({"messages": PROMPT, "max_tokens": 0}, 422, "max_tokens"),
    ({"messages": PROMPT, "top_logprobs": 21, "logprobs": True}, 422, "top_logprobs"),
    ({"messages": PROMPT, "stop": [""]}, 422, "stop"),
    ({"messages": PROMPT, "stop": ["a"] * 17}, 422, "stop"),
    ({"messages": PROMPT, "seed": 2**70}, 422, "seed"),
    ({"messages": PROMPT, "response_format": {"type": "xml"}}, 422, "response_format.type"),
    ({"messages": PROMPT, "tools": [{"type": "function", "function": {"name": "bad name!"}}]}, 422,
     "tools.0.function.name"),
    ([1, 2], 422, None),
    ({"messages": PROMPT, "max_tokens": LIMIT + 1}, 400, "max_tokens"),
    ({"messages": PROMPT, "max_completion_tokens": LIMIT + 1}, 400, "max_completion_tokens"),
    ({"messages": PROMPT, "stream_options": {"include_usage": True}}, 400, "stream_options"),
    ({"messages": PROMPT, "presence_penalty": 0.5}, 400, "presence_penalty"),
    ({"messages": PROMPT, "logit_bias": {"5": 1}}, 400, "logit_bias"),
    ({"messages": PROMPT, "top_logprobs": 2}, 400, "top_logprobs"),
    ({"messages": PROMPT, "tool_choice": "required"}, 400, "tool_choice"),
    ({"messages": PROMPT, "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "x"}}}, 400,
     "tool_choice"),
    ({"messages": PROMPT, "tools": TOOLS * 2}, 400, "tools"),
    ({"messages": PROMPT, "response_format": {"type": "json_schema"}}, 400, "response_format.json_schema"),
    ({"messages": [{"role": "user", "content": "word " * 200}]}, 400, "messages"),
    ({"messages": PROMPT, "model": "gpt-4o"}, 404, "model"),
])
def test_invalid_requests_get_openai_errors(client, body, status, param):
    error = error_of(client, status, body)
    assert error["param"] == param
    assert error["type"] == "invalid_request_error"


def test_prompt_longer_than_the_context_names_both_lengths(client):
    error = error_of(client, 400, {"messages": [{"role": "user", "content": "word " * 200}]})
    assert error["code"] == "context_length_exceeded" and "context is 128 tokens" in error["message"]


def test_malformed_oversized_and_deep_bodies(client):
    headers = {"content-type": "application/json"}
    assert "not valid JSON" in error_of(client, 400, content=b"{nope", headers=headers)["message"]
    assert "too large" in error_of(client, 413, content=b" " * (65 << 10), headers=headers)["message"]
    deep = b'{"messages": ' + b"[" * 100 + b"]" * 100 + b"}"
    error_of(client, 400, content=deep, headers=headers)
    assert error_of(client, 400, {"messages": PROMPT}, params={"cid": "c" * 300})["param"] == "cid"


def test_unknown_paths_and_methods(client):
    assert client.get("/v1/nope").status_code == 404
    assert client.get("/v1/nope").json()["error"]["message"] == "GET /v1/nope: no such endpoint"
    assert client.get("/v1/chat/completions").status_code == 405
    assert client.get("/v1/models/other").status_code == 404


def test_the_responses_api_is_refused_in_one_line_saying_to_use_chat_completions(client):
    for method, path in (("POST", "/v1/responses"), ("GET", "/v1/responses/resp_1"),
                         ("POST", "/v1/responses/resp_1/cancel")):
        response = client.request(method, path, json={"model": "proofgym:tiny", "input": "hi"})
        assert response.status_code == 404 and response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error == {"message": error["message"], "type": "invalid_request_error", "param": None,
                         "code": "unsupported_endpoint"}
        assert "POST /v1/chat/completions" in error["message"] and "\n" not in error["message"]
        assert "-M responses_api=false" in error["message"] and "--model proofgym/<model>" in error["message"]


def test_the_openai_clients_responses_call_gets_the_refusal(backend):
    import openai

    with ThreadedServer(create_model_app(backend, api_key=KEY), what="serve-model") as server:
        api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.NotFoundError, match="serve-model speaks the Chat Completions API"):
            api.responses.create(model="proofgym:tiny", input="Applicant: age 30, income 5")


def test_key_is_required(client):
    bare = TestClient(client.app)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "wrong"}):
        response = bare.post("/v1/chat/completions", json={"messages": PROMPT}, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_api_key"
    assert bare.get("/v1/models").status_code == 401
    assert bare.post("/v1/chat/completions", json={"messages": PROMPT, "max_tokens": 1},
                     headers={"X-API-Key": KEY}).status_code == 200


@pytest.mark.parametrize("value", [None, True, -1, 1e308, "x" * 1000, [], {}, [[]], {"a": None}, "\ud800"])
@pytest.mark.parametrize("field", ["messages", "temperature", "top_p", "max_tokens", "stop", "n", "seed", "tools",
                                   "tool_choice", "response_format", "logprobs", "top_logprobs"])
def test_odd_values_never_crash_the_server(client, field, value):
    body = {"messages": PROMPT, "max_tokens": 2, field: value}
    response = client.post("/v1/chat/completions", content=json.dumps(body).encode("utf-8", "surrogatepass"),
                           headers={"content-type": "application/json"})
    assert response.status_code < 500, response.text
    assert response.status_code == 200 or "error" in response.json()


def test_non_loopback_without_key_is_refused_before_loading(monkeypatch):
    for name in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ServeError, match="without an API key"):
        serve_model("no-such-model-is-loaded", host="0.0.0.0")


def test_unloadable_models_name_themselves(tmp_path):
    with pytest.raises(ModelLoadError, match="no such GGUF file"):
        load_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelLoadError, match=str(tmp_path / "empty")):
        (tmp_path / "empty").mkdir()
        load_model(str(tmp_path / "empty"))


def test_cli_api_key_env_must_name_a_set_variable(monkeypatch):
    import typer
    from typer.testing import CliRunner

    from proofgym.cli._serve_model import serve_model_command

    monkeypatch.delenv("PROOFGYM_TEST_MODEL_KEY", raising=False)
    app = typer.Typer()
    app.command()(serve_model_command)
    result = CliRunner().invoke(app, ["proofgym:tiny", "--api-key-env", "PROOFGYM_TEST_MODEL_KEY"])
    assert result.exit_code == 2 and "PROOFGYM_TEST_MODEL_KEY is not set" in result.output


@pytest.mark.parametrize("spec, options, message", [
    ("proofgym:tiny", {"backend": "vllm"}, "--backend 'vllm': expected one of torch, llama_cpp"),
    ("proofgym:tiny", {"backend": "llama_cpp"}, "the llama_cpp backend serves GGUF files only"),
    ("smollm2", {"backend": "llama_cpp", "device": "cuda"}, "the llama_cpp backend runs on the CPU"),
])
def test_a_backend_that_cannot_serve_the_model_is_refused_in_one_line(spec, options, message):
    with pytest.raises(ServeError) as caught:
        serve_model(spec, port=0, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_cli_passes_the_backend(monkeypatch):
    import typer
    from typer.testing import CliRunner

    from proofgym.cli._serve_model import serve_model_command

    app = typer.Typer()
    app.command()(serve_model_command)
    result = CliRunner().invoke(app, ["proofgym:tiny", "--backend", "llama_cpp", "--port", "0"])
    assert result.exit_code == 2 and "the llama_cpp backend serves GGUF files only" in result.output
