"""The OpenRLHF reward server: the protocol, prompt splitting, labels, auth, bad bodies; over real HTTP too."""

import asyncio
import json
import socket
import threading
import time

import httpx
import pytest

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app, parse_label, serve_reward, split_response
from proofgym.rewards import Reference

from integrations._support import flip_decision, rows_and_gold

KEY = "s3cret-key"


@pytest.fixture(scope="module")
def reward_fn():
    fn = domain_run_config("grant_eligibility").reward_function()
    yield fn
    fn.close()


def _post(app, body, *, headers=None, path="/get_reward", raw=None):
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            if raw is not None:
                return await client.post(path, content=raw, headers=headers or {})
            return await client.post(path, json=body, headers=headers or {})

    return asyncio.run(go())


def _body(rows, responses, *, labels=True, template=lambda p: p):
    prompts = [template(r["prompt"]) for r in rows]
    body = {"query": [p + c for p, c in zip(prompts, responses)], "prompts": prompts}
    if labels:
        body["labels"] = [json.dumps({"gold": r["gold"], "source_facts": r["source_facts"]}) for r in rows]
    return body


def test_prompt_plus_response_is_scored_on_the_response_only(reward_fn):
    rows, gold = rows_and_gold(4)
    app = create_reward_app(reward_fn)
    reply = _post(app, _body(rows, gold))
    assert reply.status_code == 200
    data = reply.json()
    top = reward_fn.shaper.bounds[1]
    assert data["rewards"] == [pytest.approx(top)] * 4
    assert data["scores"] == [1.0] * 4
    assert data["extra_logs"]["certified"] == [1.0] * 4 and data["extra_logs"]["invalid"] == [0.0] * 4
    assert set(data["extra_logs"]) >= {"format", "certified", "correct", "grounded", "graded", "rejected",
                                       "invalid", "abstained", "format_error"}


def test_the_system_prompts_example_block_is_never_scored(reward_fn):
    rows, gold = rows_and_gold(3)
    assert "<decision>" in rows[0]["prompt"]  # the example answer block the reference's adapter parsed
    app = create_reward_app(reward_fn)
    # Without a response, there is nothing to score: the prompt's example block must not count as one.
    empty = _post(app, _body(rows, ["", "  ", "I am not sure."])).json()
    assert empty["rewards"] == [-1.0] * 3 and empty["extra_logs"]["format_error"] == [1.0] * 3
    # A real answer after the prompt is one decision block, not two (the reference floored every item).
    assert _post(app, _body(rows, gold)).json()["extra_logs"]["format_error"] == [0.0] * 3


def test_a_chat_templated_prompt_that_is_not_an_exact_prefix_is_still_split_off(reward_fn):
    rows, gold = rows_and_gold(3)
    app = create_reward_app(reward_fn)

    def chatml(prompt):
        return f"<|im_start|>system\n{prompt}<|im_end|>\n<|im_start|>assistant\n"

    # OpenRLHF's prompts field is the templated prompt; here the query re-renders it with different whitespace.
    body = _body(rows, gold, template=chatml)
    body["query"] = [q.replace("\n\n", "\n") for q in body["query"]]
    data = _post(app, body).json()
    assert data["rewards"] == [pytest.approx(reward_fn.shaper.bounds[1])] * 3


def test_labels_carry_the_reference_in_every_documented_form(reward_fn):
    rows, gold = rows_and_gold(4)
    app = create_reward_app(reward_fn)
    body = _body(rows, [gold[0], flip_decision(gold[1]), gold[2], gold[3]], labels=False)
    body["labels"] = [{"gold": rows[0]["gold"], "source_facts": rows[0]["source_facts"]}, rows[1]["gold"], None,
                      json.dumps({"gold": rows[3]["gold"]})]
    data = _post(app, body).json()
    assert data["scores"] == [1.0, 0.0, 1.0, 1.0]  # no gold: correct means certified
    assert parse_label("permit", 0) == Reference(gold="permit")
    with pytest.raises(ValueError, match=r"labels\[2\]: expected a gold decision"):
        parse_label([1, 2], 2)
    assert parse_label(' {"gold": "deny"} ', 1) == Reference(gold="deny")
    with pytest.raises(ValueError, match=r"labels\[3\]: looks like JSON but is not valid JSON"):
        parse_label('{"gold": ', 3)


@pytest.mark.parametrize("body, where", [
    ({"prompts": ["p"]}, ["body", "query"]),
    ({"query": ["q"]}, ["body", "prompts"]),
    ({"query": "q", "prompts": ["p"]}, ["body", "query"]),
    ({"query": ["q", "r"], "prompts": ["p"]}, ["body"]),
    ({"query": ["q"], "prompts": ["p"], "labels": ["a", "b"]}, ["body"]),
    ({"query": [1], "prompts": ["p"]}, ["body", "query", 0]),
    ({"query": ["q"], "prompts": ["p"], "labels": ["{not json"]}, ["body", "labels", 0]),
    ({"query": ["q"], "prompts": ["p"], "labels": [{"gold": 3}]}, ["body", "labels", 0]),
    ([1, 2], ["body"]),
])
def test_bad_bodies_are_422_with_the_field_path(reward_fn, body, where):
    reply = _post(create_reward_app(reward_fn), body)
    assert reply.status_code == 422
    assert reply.json()["detail"][0]["loc"] == where


def test_a_body_that_is_not_json_is_422_and_an_oversized_one_413(reward_fn):
    app = create_reward_app(reward_fn, max_body_bytes=1000)
    reply = _post(app, None, raw=b"{nope", headers={"content-type": "application/json"})
    assert reply.status_code == 422 and reply.json()["detail"][0]["type"] == "json_invalid"
    assert _post(app, {"query": ["x" * 2000], "prompts": [""]}).status_code == 413
    assert _post(create_reward_app(reward_fn, max_items=2), {"query": ["a"] * 3, "prompts": [""] * 3}
                 ).status_code == 422


def test_the_api_key_is_required_when_set_in_either_header(reward_fn):
    rows, gold = rows_and_gold(1)
    app = create_reward_app(reward_fn, api_key=KEY)
    body = _body(rows, gold)
    assert _post(app, body).status_code == 401
    assert _post(app, body, headers={"X-API-Key": "wrong"}).status_code == 401
    assert _post(app, body, headers={"X-API-Key": KEY}).status_code == 200
    assert _post(app, body, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    # The key is checked before the body is even read.
    assert _post(app, None, raw=b"{nope").status_code == 401


def test_the_served_route_and_the_published_fastapi_route_answer_alike(reward_fn):
    """POST /get_reward is answered straight from ASGI; the FastAPI route that publishes it gives the same answers."""
    rows, gold = rows_and_gold(3)
    app = create_reward_app(reward_fn)
    for body in (_body(rows, [gold[0], flip_decision(gold[1]), "no answer"]), {"query": ["q"], "prompts": [1]}):
        served, published = _post(app, body), _post(app.app, body)
        assert (served.status_code, served.json()) == (published.status_code, published.json())
    assert _post(app, None, raw=b"{nope").json() == _post(app.app, None, raw=b"{nope").json()


def test_serving_beyond_loopback_without_a_key_is_refused(reward_fn):
    with pytest.raises(ValueError, match="without an API key"):
        serve_reward(reward_fn, host="0.0.0.0", port=0)


def test_split_response_prefers_the_exact_prompt_prefix():
    assert split_response("PROMPT then answer", "PROMPT") == " then answer"
    assert split_response("no prompt here", "") == "no prompt here"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_over_real_http_a_grpo_sized_batch_is_verified_as_one_deduplicated_batch():
    import uvicorn

    run = domain_run_config("grant_eligibility")
    app = create_reward_app(run, api_key=KEY)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        rows, gold = rows_and_gold(8)
        group = 8  # every prompt sampled 8 times, as GRPO does: 64 items, 8 distinct answers
        body = _body([r for r in rows for _ in range(group)], [g for g in gold for _ in range(group)])
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            assert client.get("/health").json()["ok"] is True  # open without a key
            assert client.post("/get_reward", json=body).status_code == 401
            reply = client.post("/get_reward", json=body, headers={"X-API-Key": KEY})
        assert reply.status_code == 200
        data = reply.json()
        assert len(data["rewards"]) == 64 and set(data["scores"]) == {1.0}
        metrics = app.app.state.reward_fn.runtime.last_batch_metrics()
        assert metrics.batches == 1 and metrics.claims == 64 and metrics.dedup_saves == 56
    finally:
        server.should_exit = True
        thread.join(20)
    assert not thread.is_alive()


@pytest.mark.parametrize("raw, loc, words", [
    # Each was a 500: a RecursionError, and Python's limit on the digits of an int.
    (b"[" * 10_000 + b"]" * 10_000, ["body"], "the limit is 64 levels"),
    (b'{"query":["q"],"prompts":["p"],"x":' + b"9" * 5000 + b"}", ["body", "x"], "the limit is 1000 digits"),
    (b'{"query":["q"],"prompts":["p"],"labels":[' + b"9" * 5000 + b"]}", ["body", "labels", 0], "1000 digits"),
    # Inside a label's JSON text, which the server parses in turn.
    (b'{"query":["q"],"prompts":["p"],"labels":["{\\"gold\\":' + b"[" * 10_000 + b'"]}', ["body", "labels", 0],
     "labels[0]: its JSON has arrays and objects nested more than 64 levels deep at gold"),
    (b'{"query":["q"],"prompts":["p"],"labels":["{\\"gold\\":' + b"9" * 5000 + b'}"]}', ["body", "labels", 0],
     "labels[0]: its JSON has an integer of 5000 digits at gold; the limit is 1000 digits"),
    (b'{"query":["q"],"prompts":[' + b'"p",' * 20 + b'"p"]}', ["body", "prompts"], "21 items, the limit is 20"),
])
def test_a_body_past_the_parsers_limits_is_422_naming_the_field_and_the_limit(reward_fn, raw, loc, words):
    reply = _post(create_reward_app(reward_fn, max_items=20), None, raw=raw)
    assert reply.status_code == 422, reply.text
    [detail] = reply.json()["detail"]
    assert detail["loc"][:len(loc)] == loc and words in detail["msg"]


def test_nan_surrogates_and_nul_in_queries_prompts_and_labels_are_scored(reward_fn):
    rows, gold = rows_and_gold(1)
    prompt, facts = rows[0]["prompt"], rows[0]["source_facts"]
    label = {"gold": rows[0]["gold"], "source_facts": {**facts, "note": float("nan"), "\ud800": "\udc00\x00"}}
    body = {"query": [prompt + gold[0] + "\ud800\x00"], "prompts": [prompt], "labels": [label]}
    reply = _post(create_reward_app(reward_fn), None, raw=json.dumps(body).encode(),
                  headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["scores"] == [1.0]  # the extra facts are not the record's: the decision is still correct
