"""The reward server's cross-request micro-batching: concurrent requests verified as one runtime batch, each
answered with its own items in order; one bad request cannot fail the others; options validated; drain.

Batches here close because they are full (``batch_max_items``), never because a window elapsed, so what is
asserted does not depend on timing."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

from proofgym.integrations import domain_run_config
from proofgym.reward_server import create_reward_app
from proofgym.reward_server._microbatch import MicroBatcher
from proofgym.rewards import RewardFunction

from ._reward_servers import served
from integrations._support import flip_decision, rows_and_gold

WINDOW_S = 1.0  # only an upper bound: every batch below fills up first


@pytest.fixture
def reward_fn():
    fn = domain_run_config("grant_eligibility").reward_function()
    yield fn
    fn.close()


def _requests(n_requests: int, per_request: int, *, seed: int = 0):
    """``n_requests`` bodies of ``per_request`` samples each: gold, wrong and unparsable answers mixed."""
    rows, gold = rows_and_gold(n_requests * per_request, seed=seed)
    answers = [g if i % 3 == 0 else flip_decision(g) if i % 3 == 1 else "no answer" for i, g in enumerate(gold)]
    bodies = []
    for r in range(n_requests):
        chunk = range(r * per_request, (r + 1) * per_request)
        bodies.append({"query": [rows[i]["prompt"] + answers[i] for i in chunk],
                       "prompts": [rows[i]["prompt"] for i in chunk],
                       "labels": [json.dumps({"gold": rows[i]["gold"], "source_facts": rows[i]["source_facts"]})
                                  for i in chunk]})
    return bodies


async def _post_all(app, bodies, *, raw=None):
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://reward") as client:
        requests = [client.post("/get_reward", json=body) for body in bodies]
        requests += [client.post("/get_reward", content=content, headers={"content-type": "application/json"})
                     for content in raw or ()]
        return await asyncio.gather(*requests)


def _alone(reward_fn, body):
    """The answer the body gets when it is the only request (micro-batching off)."""
    [reply] = asyncio.run(_post_all(create_reward_app(reward_fn, batch_window_s=0), [body]))
    return reply.json()


def test_concurrent_requests_are_verified_as_one_runtime_batch_and_answered_in_order(reward_fn):
    bodies = _requests(6, 2)
    app = create_reward_app(reward_fn, batch_window_s=WINDOW_S, batch_max_items=12)
    before = reward_fn.runtime.metrics().batches
    replies = asyncio.run(_post_all(app, bodies))
    assert [reply.status_code for reply in replies] == [200] * 6
    batcher = app.app.state.batcher
    assert (batcher.calls, batcher.requests) == (1, 6)
    assert reward_fn.runtime.metrics().batches - before == 1 and reward_fn.runtime.last_batch_metrics().claims == 8
    # Each request gets its own items, in its own order, exactly as if it had been scored alone.
    for body, reply in zip(bodies, replies):
        assert reply.json() == _alone(reward_fn, body)
    assert [reply.json()["scores"] for reply in replies] == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]] * 2


def test_batches_hold_at_most_batch_max_items_samples(reward_fn):
    app = create_reward_app(reward_fn, batch_window_s=WINDOW_S, batch_max_items=2)
    replies = asyncio.run(_post_all(app, _requests(8, 1)))
    assert [reply.status_code for reply in replies] == [200] * 8
    assert (app.app.state.batcher.calls, app.app.state.batcher.requests) == (4, 8)


def test_an_invalid_body_is_refused_alone_and_the_others_are_batched(reward_fn):
    bodies = _requests(3, 1)
    app = create_reward_app(reward_fn, batch_window_s=WINDOW_S, batch_max_items=3)
    bad = [b"{nope", json.dumps({"query": ["q"], "prompts": ["p"], "labels": ["{not json"]}).encode()]
    replies = asyncio.run(_post_all(app, bodies, raw=bad))
    assert [reply.status_code for reply in replies] == [200, 200, 200, 422, 422]
    assert replies[4].json()["detail"][0]["loc"] == ["body", "labels", 0]
    assert (app.app.state.batcher.calls, app.app.state.batcher.requests) == (1, 3)


class _RaisesOn(RewardFunction):
    """A reward path whose scoring raises for any batch holding a response with ``marker`` (a reward path bug)."""

    def __init__(self, inner: RewardFunction, marker: str) -> None:
        super().__init__(inner.parser, inner.runtime, inner.shaper, error_budget=inner.error_budget)
        self.marker = marker

    def score(self, prompts, completions, refs=None):
        if any(self.marker in completion for completion in completions):
            raise RuntimeError("the reward path failed on this sample")
        return super().score(prompts, completions, refs)


def test_a_sample_that_raises_fails_only_its_own_request(reward_fn):
    bodies = _requests(4, 1)
    bodies[2]["query"][0] += " BOOM"
    app = create_reward_app(_RaisesOn(reward_fn, "BOOM"), batch_window_s=WINDOW_S, batch_max_items=4)
    replies = asyncio.run(_post_all(app, bodies))
    assert [reply.status_code for reply in replies] == [200, 200, 500, 200]
    assert replies[2].json() == {"detail": "the reward server failed to score this request: RuntimeError"}
    for i in (0, 1, 3):
        assert replies[i].json() == _alone(reward_fn, bodies[i])
    # The merged call, then each of its four requests alone.
    assert app.app.state.batcher.calls == 5


def test_with_batching_off_every_request_is_its_own_batch(reward_fn):
    app = create_reward_app(reward_fn, batch_window_s=0)
    assert app.app.state.batcher is None
    before = reward_fn.stats.batches
    replies = asyncio.run(_post_all(app, _requests(5, 1)))
    assert [reply.status_code for reply in replies] == [200] * 5
    assert reward_fn.stats.batches - before == 5


@pytest.mark.parametrize("options, words", [
    ({"batch_window_s": -0.001}, "batch_window_s must be a number of seconds from 0"),
    ({"batch_window_s": float("nan")}, "batch_window_s must be"),
    ({"batch_window_s": float("inf")}, "batch_window_s must be"),
    ({"batch_window_s": 2}, "to 1, got 2"),
    ({"batch_window_s": "5ms"}, "got '5ms'"),
    ({"batch_window_s": True}, "batch_window_s must be"),
    ({"batch_max_items": 0}, "batch_max_items must be an integer of at least 1, got 0"),
    ({"batch_max_items": 2.5}, "batch_max_items must be an integer"),
])
def test_bad_batching_options_are_refused_naming_the_option(reward_fn, options, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        create_reward_app(reward_fn, **options)


def test_the_cli_refuses_bad_batching_options_and_its_defaults_are_the_servers():
    import inspect

    from typer.testing import CliRunner

    from proofgym.cli import app
    from proofgym.cli._train import serve_reward_command
    from proofgym.reward_server import _app as reward_app

    defaults = {name: p.default.default for name, p in inspect.signature(serve_reward_command).parameters.items()}
    assert defaults["batch_window_s"] == reward_app.DEFAULT_BATCH_WINDOW_S
    assert defaults["batch_max_items"] == reward_app.DEFAULT_BATCH_MAX_ITEMS
    runner = CliRunner()
    for option, value in (("--batch-window-s", "-1"), ("--batch-window-s", "3"), ("--batch-window-s", "nan"),
                          ("--batch-max-items", "0")):
        result = runner.invoke(app, ["serve-reward", "--config", "configs/run/grant_eligibility.yaml", option, value])
        assert result.exit_code == 2 and option in result.output, result.output


def test_a_request_cancelled_while_it_waits_is_left_out_of_the_batch():
    seen = []

    def score(items):
        seen.append(list(items))
        return [item.upper() for item in items]

    batcher = MicroBatcher(score, window_s=WINDOW_S, max_items=2, max_batches=1)

    async def go():
        gone = asyncio.ensure_future(batcher.submit(["gone"]))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        return await asyncio.gather(batcher.submit(["a"]), batcher.submit(["b"]))

    assert asyncio.run(go()) == [["A"], ["B"]]
    assert seen == [["a", "b"]]


def test_requests_waiting_in_a_batch_are_answered_when_the_server_drains(reward_fn):
    """Shutdown (uvicorn's graceful drain) waits for the requests a batch holds, which all get their answers."""
    bodies = _requests(4, 1)
    app = create_reward_app(reward_fn, batch_window_s=WINDOW_S, batch_max_items=4)
    replies, errors = [], []
    with served(app) as (port, server):
        def post(body):
            try:
                replies.append(httpx.post(f"http://127.0.0.1:{port}/get_reward", json=body, timeout=60))
            except httpx.HTTPError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=post, args=(body,)) for body in bodies[:3]]
        for thread in threads:
            thread.start()
        while app.app.state.batcher.waiting_items < 3:  # three requests wait for a fourth
            assert all(thread.is_alive() for thread in threads), errors
            time.sleep(0.01)
        server.should_exit = True  # draining from here; the three are in flight
        deadline = time.monotonic() + 60
        while any(thread.is_alive() for thread in threads) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert not errors and sorted(reply.status_code for reply in replies) == [200, 200, 200]
