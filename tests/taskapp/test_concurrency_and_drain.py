import asyncio
import contextlib
import os
import signal
import time

import httpx

from proofgym.taskapp import create_app
from proofgym.taskapp._controller import Draining, RolloutController
from proofgym.traces import TraceStore

from ._support import ScriptedModelServer, rollout_body

ANSWER = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]


@contextlib.asynccontextmanager
async def running(app):
    """The app with its lifespan started, and an async client talking to it in-process."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app", timeout=60) as client:
            yield client


def openai_body(model, seed=0):
    return rollout_body(seed, policy_name="openai", policy_config={"model": "m", "inference_url": model.url,
                                                                   "max_retries": 0})


def test_no_more_than_max_concurrency_rollouts_run_at_once(traces_path):
    app = create_app("grant_eligibility", api_key=None, store=traces_path, max_concurrency=2)
    peak = 0

    async def main():
        nonlocal peak
        with ScriptedModelServer(ANSWER, delay_s=0.2) as model:
            async with running(app) as client:
                controller = app.state.controller

                async def watch():
                    nonlocal peak
                    while True:
                        peak = max(peak, controller.running)
                        await asyncio.sleep(0.01)

                watcher = asyncio.create_task(watch())
                responses = await asyncio.gather(*(client.post("/rollout", json=openai_body(model, seed))
                                                   for seed in range(6)))
                watcher.cancel()
        return responses

    responses = asyncio.run(main())
    assert [r.status_code for r in responses] == [200] * 6
    assert peak == 2
    with TraceStore(traces_path, create=False) as store:
        assert store.count_sessions() == 6


def test_drain_finishes_quick_rollouts_cancels_stuck_ones_and_refuses_new_ones(traces_path):
    app = create_app("grant_eligibility", api_key=None, store=traces_path, grace_s=3.0)

    async def main():
        with ScriptedModelServer(ANSWER, delay_s=0.2) as quick, ScriptedModelServer(ANSWER, delay_s=30) as stuck:
            async with running(app) as client:
                quick_calls = [asyncio.create_task(client.post("/rollout", json=openai_body(quick, seed)))
                               for seed in range(3)]
                stuck_call = asyncio.create_task(client.post("/rollout", json=openai_body(stuck, 9)))
                deadline = time.monotonic() + 30
                while app.state.controller.started < 4 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)  # every rollout admitted (a loaded machine takes longer than 0.1 s)
                drain = asyncio.create_task(app.state.controller.drain(3.0))
                await asyncio.sleep(0)
                late = await client.post("/rollout", json=rollout_body())
                health = await client.get("/health")
                await drain
                return await asyncio.gather(*quick_calls), await stuck_call, late, health

    quick, stuck, late, health = asyncio.run(main())
    assert [r.status_code for r in quick] == [200] * 3
    assert all(r.json()["status"] == "ok" for r in quick)
    assert stuck.status_code == 503 and late.status_code == 503
    assert health.status_code == 503 and health.json()["draining"] is True
    with TraceStore(traces_path, create=False) as store:
        statuses = sorted(s.status for s in store.list_sessions())
        assert statuses == ["cancelled", "ok", "ok", "ok"]
        [cancelled] = store.list_sessions(status="cancelled")
        assert cancelled.seed == 9
        [run] = store.list_runs()
        assert run.status == "error" and run.summary == {"sessions": 4, "ok": 3, "failed": 1}


def test_a_queued_rollout_never_starts_once_the_app_drains():
    async def main():
        controller = RolloutController(1)
        started = []

        async def rollout(name, seconds):
            started.append(name)
            await asyncio.sleep(seconds)
            return name

        first = asyncio.create_task(controller.run(rollout("first", 0.2)))
        await asyncio.sleep(0.01)
        queued = asyncio.create_task(controller.run(rollout("queued", 0)))
        await asyncio.sleep(0.01)
        await controller.drain(5)
        return await first, await asyncio.gather(queued, return_exceptions=True), started

    first, (queued,), started = asyncio.run(main())
    assert first == "first" and isinstance(queued, Draining) and started == ["first"]


@contextlib.contextmanager
def server_handler_for(sig, record):
    """A Python handler for ``sig`` (as uvicorn installs one) that calls ``record(sig)``; the previous one after."""
    def handler(signum, frame):
        record(signum)

    previous = signal.signal(sig, handler)
    try:
        yield handler
    finally:
        signal.signal(sig, previous)


def test_a_signal_drains_the_app_before_the_servers_own_handler_gets_it(traces_path):
    """``drain_on_signal``: the first SIGTERM drains (503s, /health draining) and only then reaches the handler
    installed before (uvicorn's, in a real server); a later one reaches it at once; shutdown puts it back."""
    app = create_app("grant_eligibility", api_key=None, store=traces_path, grace_s=3.0, drain_on_signal=True)
    controller = app.state.controller
    handed_on = []

    async def main():
        with ScriptedModelServer(ANSWER, delay_s=0.5) as model:
            async with running(app) as client:
                call = asyncio.create_task(client.post("/rollout", json=openai_body(model)))
                await asyncio.sleep(0.2)
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(0.1)
                during = handed_on[:], await client.get("/health"), await client.post("/rollout", json=rollout_body())
                response = await call
                await asyncio.sleep(0.05)
                after_drain = handed_on[:]
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(0.05)
                return during, response, after_drain, handed_on[:]

    with server_handler_for(signal.SIGTERM, lambda sig: handed_on.append((sig, controller.draining,
                                                                        controller.running))) as handler:
        (handed_on_during, health, late), response, after_drain, after_second = asyncio.run(main())
        assert signal.getsignal(signal.SIGTERM) is handler  # put back at shutdown
    assert handed_on_during == []
    assert health.status_code == 503 and health.json()["draining"] is True
    assert late.status_code == 503 and late.headers["Retry-After"] == "1"
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert after_drain == [(signal.SIGTERM, True, 0)]
    assert after_second == [(signal.SIGTERM, True, 0)] * 2


def test_a_second_signal_during_the_drain_reaches_the_server_at_once_after_the_first(traces_path):
    app = create_app("grant_eligibility", api_key=None, store=traces_path, grace_s=0.5, drain_on_signal=True)
    controller = app.state.controller
    handed_on = []

    async def main():
        with ScriptedModelServer(ANSWER, delay_s=30) as stuck:
            async with running(app) as client:
                call = asyncio.create_task(client.post("/rollout", json=openai_body(stuck)))
                await asyncio.sleep(0.2)
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(0.05)
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(0.05)
                during = handed_on[:]
                return during, await call

    with server_handler_for(signal.SIGINT, lambda sig: handed_on.append((sig, controller.running))) as handler:
        during, response = asyncio.run(main())
        assert signal.getsignal(signal.SIGINT) is handler
    assert during == [(signal.SIGINT, 1), (signal.SIGINT, 1)]  # both, while the rollout still runs
    assert handed_on == during  # the drain does not hand the first one on again
    assert response.status_code == 503  # cancelled by the drain after grace_s


def test_no_signal_handlers_without_drain_on_signal_or_a_python_handler(traces_path):
    seen = []

    async def main(app):
        async with running(app):
            seen.append(signal.getsignal(signal.SIGTERM))

    with server_handler_for(signal.SIGTERM, lambda sig: None) as handler:
        asyncio.run(main(create_app("grant_eligibility", api_key=None, store=traces_path)))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        asyncio.run(main(create_app("grant_eligibility", api_key=None, store=traces_path, drain_on_signal=True)))
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert seen == [handler, signal.SIG_DFL]
