"""serve-reward's per-request shortcuts answer as the general path does: the 200 body is the bytes FastAPI's
``JSONResponse`` of the ``RewardResponse`` model would send, a body the shortcut does not take is validated by the
model, and the connection cap holds within the open-file limit."""

import asyncio
import json
import logging

import httpx
import pytest

from proofgym.integrations import domain_run_config
from proofgym.reward_server import _app as reward_app
from proofgym.reward_server import create_reward_app

from integrations._support import rows_and_gold


@pytest.fixture(scope="module")
def reward_fn():
    fn = domain_run_config("grant_eligibility").reward_function()
    yield fn
    fn.close()


def _post(app, *, raw):
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/get_reward", content=raw)

    return asyncio.run(go())


def _one_sample_bodies(n):
    rows, gold = rows_and_gold(n)
    bodies = []
    for i, (row, response) in enumerate(zip(rows, gold)):
        body = {"query": [row["prompt"] + response], "prompts": [row["prompt"]]}
        if i % 2:
            body["labels"] = [json.dumps({"gold": row["gold"], "source_facts": row["source_facts"]})]
        bodies.append(body)
    return bodies


def test_the_200_body_is_the_models_json_response(reward_fn):
    from fastapi.responses import JSONResponse

    app = create_reward_app(reward_fn, batch_window_s=0)
    for body in _one_sample_bodies(4):
        reply = _post(app, raw=json.dumps(body).encode())
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "application/json"
        assert int(reply.headers["content-length"]) == len(reply.content)
        refs = [reward_app.parse_label(label, i) for i, label in enumerate(body.get("labels") or [None])]
        items = reward_fn.score(None, [reward_app.split_response(body["query"][0], body["prompts"][0])], refs)
        expected = JSONResponse(reward_app.build_response(items, invalid_fill=0.0).model_dump()).body
        assert reply.content == expected


def test_a_float_is_a_float_whatever_the_shaper_returns():
    class Item:
        reward, outcome = 1, "certified"
        components = {"correct": 1, "format": True}

    content = reward_app.response_content([Item()], invalid_fill=0.0)
    assert content == reward_app.build_response([Item()], invalid_fill=0.0).model_dump()
    assert reward_app.response_bytes(content).startswith(
        b'{"rewards":[1.0],"scores":[1.0],"extra_logs":{"format":[1.0]')


@pytest.mark.parametrize("body, loc", [
    ({"query": ["a"], "prompts": [1]}, ["body", "prompts", 0]),
    ({"query": ["a", "b"], "prompts": ["a"]}, ["body"]),
    ({"query": ["a"], "prompts": ["a"], "labels": []}, ["body"]),
    ({"query": ["a"], "prompts": ["a"], "labels": "x"}, ["body", "labels"]),
    ({"query": "a", "prompts": ["a"]}, ["body", "query"]),
    ({"prompts": ["a"]}, ["body", "query"]),
    ([1], ["body"]),
])
def test_what_the_shortcut_does_not_take_the_model_refuses(reward_fn, body, loc):
    reply = _post(create_reward_app(reward_fn), raw=json.dumps(body).encode())
    assert reply.status_code == 422
    assert reply.json()["detail"][0]["loc"] == loc


def test_lists_over_the_item_limit_are_refused_before_validation(reward_fn):
    body = {"query": ["a"] * 3, "prompts": ["a"] * 3}
    reply = _post(create_reward_app(reward_fn, max_items=2), raw=json.dumps(body).encode())
    assert reply.status_code == 422
    assert [d["type"] for d in reply.json()["detail"]] == ["too_long", "too_long"]


def test_the_key_parameter_is_taken_out_encoded_or_not():
    for query, keys, kept in [(b"key=abc123", ["abc123"], b""), (b"x=1&key=a%20b", ["a b"], b"x=1"),
                              (b"k%65y=a+b&y=2", ["a b"], b"y=2"), (b"key=", [""], b""),
                              (b"keys=1&key=%C3%A9", ["\u00e9"], b"keys=1")]:
        scope = {"query_string": query}
        assert reward_app._take_key_parameters(scope) == keys
        assert scope["query_string"] == kept


class _Limits:
    def __init__(self, soft, hard, *, settable=True):
        import resource

        self.resource, self.limits, self.settable = resource, [soft, hard], settable

    def getrlimit(self, which):
        assert which == self.resource.RLIMIT_NOFILE
        return tuple(self.limits)

    def setrlimit(self, which, limits):
        if not self.settable or (self.limits[1] != self.resource.RLIM_INFINITY and limits[0] > self.limits[1]):
            raise ValueError("not allowed")
        self.limits = list(limits)


@pytest.mark.parametrize("soft, hard, settable, wanted, soft_after, granted", [
    (20_000, 20_000, True, 1024, 20_000, 1024),          # room already: nothing changes
    (1024, 4096, True, 1024, 1024 + 256, 1024),          # the soft limit raised, as far as needed
    (1024, 1100, True, 1024, 1100, 1100 - 256),          # the hard limit too low: the cap lowered under it
    (1024, 4096, False, 1024, 1024, 1024 - 256),         # not allowed to raise it: the cap lowered
    (100, 100, True, 1024, 100, 1),                      # at least one connection
])
def test_the_connection_cap_fits_the_open_file_limit(monkeypatch, caplog, soft, hard, settable, wanted,
                                                     soft_after, granted):
    import resource

    fake = _Limits(soft, hard, settable=settable)
    monkeypatch.setattr(resource, "getrlimit", fake.getrlimit)
    monkeypatch.setattr(resource, "setrlimit", fake.setrlimit)
    with caplog.at_level(logging.WARNING, logger="proofgym.integrations.openrlhf"):
        assert reward_app.connections_within_fd_limit(wanted) == granted
    assert fake.limits[0] == soft_after
    assert ("max_connections lowered" in caplog.text) == (granted < wanted)


def test_serve_reward_defaults_to_a_connection_per_sample_of_a_grpo_step():
    import inspect

    assert reward_app.DEFAULT_MAX_CONNECTIONS == 1024
    assert inspect.signature(reward_app.serve_reward).parameters["max_connections"].default == 1024
