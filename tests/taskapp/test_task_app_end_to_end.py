"""The real task app (``proofgym serve`` under uvicorn, in a subprocess on loopback) driven over HTTP."""

import asyncio
import json
import sqlite3

import httpx
import pytest
from _judge import judge_problem, requires_judge

from proofgym.traces import TraceStore

from ._support import AND_GATE, SUBMIT, WRONG_AND_GATE, TaskAppProcess, rollout_body, write_file


@pytest.fixture(scope="module")
def verilog_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("verilog") / "traces.db"
    with TaskAppProcess("verilog", "--env-config", json.dumps({"problem_id": "Prob001_and_gate"}),
                        "--max-body-bytes", "65536", traces=traces) as app:
        yield app


@pytest.fixture(scope="module")
def grant_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("grant") / "traces.db"
    with TaskAppProcess("grant_eligibility", traces=traces) as app:
        yield app


def scripted(*actions, seed=0, **extra):
    return rollout_body(seed, policy_name="scripted", policy_config={"actions": list(actions)}, **extra)


@requires_judge
def test_verilog_oracle_solves_the_problem(verilog_app):
    with verilog_app.client() as client:
        data = client.post("/rollout", json=rollout_body(4)).json()
    assert data["status"] == "ok" and data["metrics"]["outcome_score"] == 1.0
    assert data["pipeline_metadata"]["task_id"] == "Prob001_and_gate"
    assert data["metrics"]["mean_return"] == pytest.approx(1.0)


@requires_judge
def test_verilog_scripted_designs_are_judged(verilog_app):
    with verilog_app.client() as client:
        right = client.post("/rollout", json=scripted(write_file(AND_GATE), {"tool": "simulate", "args": {}},
                                                      SUBMIT)).json()
        wrong = client.post("/rollout", json=scripted(write_file(WRONG_AND_GATE), SUBMIT)).json()
    assert right["metrics"]["outcome_score"] == 1.0 and right["trajectories"][0]["length"] == 3
    assert right["trajectories"][0]["final"]["verdict"]["outcome"] == "certified"
    assert wrong["metrics"]["outcome_score"] == 0.0 and wrong["metrics"]["mean_return"] < 0.5
    assert wrong["trajectories"][0]["final"]["verdict"]["outcome"] == "refuted"


def test_auth_limits_and_bad_bodies_over_http(verilog_app):
    with httpx.Client(base_url=verilog_app.url, timeout=30) as anonymous:
        assert anonymous.get("/health").json()["ok"] is True
        assert anonymous.post("/rollout", json=rollout_body()).status_code == 401
        assert anonymous.get("/info", headers={"X-API-Key": "wrong"}).status_code == 401
        assert anonymous.get("/info", headers={"Authorization": "Bearer test-key"}).status_code == 200
    with verilog_app.client() as client:
        big = scripted(write_file("x" * 100_000))
        assert client.post("/rollout", json=big).status_code == 413
        invalid = client.post("/rollout", json={"run_id": "r", "env": {"seed": "zero"}})
        assert invalid.status_code == 422 and invalid.json()["detail"][0]["loc"] == ["body", "env", "seed"]
        assert client.post("/rollout", json={**rollout_body(), "env": {"env_name": "loan"}}).status_code == 404


def test_correlation_ids_over_http(verilog_app):
    url = "http://127.0.0.1:9/v1/chat/completions?cid=trace_e2e"
    with verilog_app.client() as client:
        missing = client.post("/rollout", json=scripted(SUBMIT, mode="rl"))
        data = client.post("/rollout", json={**scripted(write_file(AND_GATE), SUBMIT, mode="rl"),
                                             "policy": {"policy_name": "scripted", "config": {
                                                 "actions": [write_file(AND_GATE), SUBMIT], "inference_url": url}}})
    assert missing.status_code == 422 and "cid" in missing.json()["detail"][0]["msg"]
    data = data.json()
    assert data["pipeline_metadata"]["inference_url"] == data["trajectories"][0]["inference_url"] == url
    assert all(step["info"]["meta"]["inference_url"] == url for step in data["trajectories"][0]["steps"])
    with TraceStore(verilog_app.traces, create=False) as store:
        [session] = store.find_by_correlation_id("trace_e2e")
    assert session.session_id == data["pipeline_metadata"]["session_id"] and len(session.steps) == 2


def test_grant_rollouts_run_concurrently(grant_app):
    async def main():
        async with grant_app.async_client() as client:
            return await asyncio.gather(*(client.post("/rollout", json=rollout_body(seed)) for seed in range(12)))

    responses = asyncio.run(main())
    assert [r.status_code for r in responses] == [200] * 12
    assert all(r.json()["metrics"]["outcome_score"] == 1.0 for r in responses)
    assert len({r.json()["pipeline_metadata"]["task_id"] for r in responses}) == 12


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_a_terminated_app_finishes_its_runs(tmp_path, workers):
    traces = tmp_path / "traces.db"
    with TaskAppProcess("grant_eligibility", "--workers", str(workers), traces=traces) as app:

        async def main():
            async with app.async_client() as client:
                return await asyncio.gather(*(client.post("/rollout", json=rollout_body(seed, run_id="graceful"))
                                              for seed in range(6)))

        assert [r.status_code for r in asyncio.run(main())] == [200] * 6
        app.terminate()
    assert "".join(app.log).count("Application shutdown complete") == workers
    with TraceStore(traces, create=False) as store:
        [run] = store.list_runs()
        assert run.run_id == "graceful" and run.status == "ok"
        assert run.summary == {"sessions": 6, "ok": 6, "failed": 0}


def test_a_killed_app_leaves_every_committed_session_complete(tmp_path):
    """SIGKILL while many multi-step rollouts are in flight: the store is intact, every session in it is whole,
    and every rollout the app answered is in it."""
    from ._support import ScriptedModelServer

    traces = tmp_path / "traces.db"
    script = [write_file(AND_GATE)] * 4 + [SUBMIT]  # rewriting top.v keeps one valid design
    answered = []
    with ScriptedModelServer(script, delay_s=0.05) as model, \
            TaskAppProcess("verilog", "--env-config", json.dumps({"problem_id": "Prob001_and_gate"}),
                           "--max-concurrency", "16", traces=traces) as app:

        async def one(client, seed):
            body = rollout_body(seed, policy_name="openai", policy_config={"model": "m", "inference_url": model.url})
            try:
                response = await client.post("/rollout", json=body)
            except httpx.HTTPError:
                return  # the app died under it
            if response.status_code == 200:
                answered.append(response.json()["pipeline_metadata"]["session_id"])

        async def main():
            async with app.async_client() as client:
                tasks = [asyncio.create_task(one(client, seed)) for seed in range(48)]
                while len(answered) < 8 and not all(task.done() for task in tasks):
                    await asyncio.sleep(0.01)
                app.kill()
                await asyncio.gather(*tasks)

        asyncio.run(main())
    assert 8 <= len(answered) < 48
    with sqlite3.connect(traces) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with TraceStore(traces, create=False) as store:
        sessions = list(store.iter_sessions())
    assert set(answered) <= {s.session_id for s in sessions}
    score = 1.0 if judge_problem() is None else None  # without the judge every submit is invalid: no outcome
    for session in sessions:
        assert session.status == "ok" and session.ended_at is not None
        assert [step.index for step in session.steps] == list(range(5))
        assert session.outcome_reward.steps == 5 and session.outcome_reward.score == score
        assert all(step.env_event is not None and len(step.lm_calls) == 1 for step in session.steps)


async def _until_every_rollout_asked_its_model(*models_and_counts, timeout_s: float = 30.0) -> None:
    """Wait until each scripted model server has been asked as often as given: the rollouts are then running.
    (A fixed sleep before SIGTERM was not enough on a loaded machine: a rollout that had not arrived yet was refused
    as a new one, 503, and so never stored.)"""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while any(len(model.queries) < count for model, count in models_and_counts):
        assert asyncio.get_running_loop().time() < deadline, [len(m.queries) for m, _ in models_and_counts]
        await asyncio.sleep(0.02)


def test_sigterm_drains_running_rollouts_and_refuses_new_ones(tmp_path):
    from ._support import ScriptedModelServer

    traces = tmp_path / "traces.db"
    answer = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]
    with ScriptedModelServer(answer, delay_s=0.5) as quick, ScriptedModelServer(answer, delay_s=30) as stuck, \
            TaskAppProcess("grant_eligibility", "--grace-s", "1.5", traces=traces) as app:

        def body(model, seed):
            return rollout_body(seed, policy_name="openai", policy_config={"model": "m", "inference_url": model.url,
                                                                           "max_retries": 0})

        async def main():
            async with app.async_client() as client:
                running = [asyncio.create_task(client.post("/rollout", json=body(quick, seed))) for seed in range(2)]
                running.append(asyncio.create_task(client.post("/rollout", json=body(stuck, 7))))
                await _until_every_rollout_asked_its_model((quick, 2), (stuck, 1))
                app.process.send_signal(15)
                await asyncio.sleep(0.2)
                late = await client.post("/rollout", json=rollout_body())
                health = await client.get("/health")
                return await asyncio.gather(*running), late, health

        (first, second, stuck_response), late, health = asyncio.run(main())
        assert app.process.wait(timeout=30) is not None
    assert first.status_code == second.status_code == 200 and first.json()["status"] == "ok"
    assert stuck_response.status_code == 503 and late.status_code == 503
    assert health.status_code == 503 and health.json()["draining"] is True
    with TraceStore(traces, create=False) as store:
        assert sorted(s.status for s in store.list_sessions()) == ["cancelled", "ok", "ok"]
        assert store.list_runs()[0].status == "error"


def test_sigterm_drains_every_worker_of_a_multi_worker_app(tmp_path):
    """SIGTERM to the supervisor of ``--workers 2``: each worker keeps answering while it drains (503 for new
    rollouts, /health draining), lets quick rollouts finish, cancels and records stuck ones, then closes."""
    from ._support import ScriptedModelServer

    traces = tmp_path / "traces.db"
    answer = [{"tool": "answer", "args": {"completion": "<decision>{}</decision>"}}]
    with ScriptedModelServer(answer, delay_s=1.0) as quick, ScriptedModelServer(answer, delay_s=30) as stuck, \
            TaskAppProcess("grant_eligibility", "--workers", "2", "--grace-s", "3", traces=traces) as app:

        def body(model, seed):
            return rollout_body(seed, policy_name="openai", policy_config={"model": "m", "inference_url": model.url,
                                                                           "max_retries": 0})

        async def probe(method, path, **kwargs):
            # A fresh connection each time, so the probes reach whichever worker still listens.
            async with httpx.AsyncClient(base_url=app.url, headers=app.headers, timeout=5) as client:
                try:
                    return await client.request(method, path, **kwargs)
                except httpx.TransportError:  # the worker closed its socket between accept and answer
                    return None

        async def main():
            # Both workers listen (the port answers once the first does), so both take the signal as apps.
            deadline = asyncio.get_running_loop().time() + 30
            while "".join(app.log).count("Application startup complete") < 2:
                assert asyncio.get_running_loop().time() < deadline, "".join(app.log)
                await asyncio.sleep(0.05)
            async with app.async_client() as client:
                running = [asyncio.create_task(client.post("/rollout", json=body(quick, seed))) for seed in range(4)]
                running += [asyncio.create_task(client.post("/rollout", json=body(stuck, seed)))
                            for seed in range(10, 14)]
                await _until_every_rollout_asked_its_model((quick, 4), (stuck, 4))
                app.process.send_signal(15)
                healths = []
                deadline = asyncio.get_running_loop().time() + 3
                while asyncio.get_running_loop().time() < deadline:
                    health = await probe("GET", "/health")
                    healths.append(health)
                    if health is not None and health.status_code == 503:
                        break
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.1)  # the supervisor signals both workers at once
                late = [await probe("POST", "/rollout", json=rollout_body(seed)) for seed in range(20, 24)]
                return await asyncio.gather(*running), healths, late

        responses, healths, late = asyncio.run(main())
        app.process.wait(timeout=30)
    draining = [h for h in healths if h is not None and h.status_code == 503]
    assert draining and draining[-1].json()["draining"] is True, [h and h.status_code for h in healths]
    late_codes = [r.status_code if r is not None else None for r in late]
    assert 503 in late_codes and set(late_codes) <= {503, None}, late_codes
    assert all(r.headers["Retry-After"] == "1" for r in late if r is not None)
    assert [r.status_code for r in responses[:4]] == [200] * 4
    assert all(r.json()["status"] == "ok" for r in responses[:4])
    assert [r.status_code for r in responses[4:]] == [503] * 4
    assert "".join(app.log).count("Application shutdown complete") == 2
    with sqlite3.connect(traces) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with TraceStore(traces, create=False) as store:
        sessions = store.list_sessions()
    assert sorted((s.seed, s.status) for s in sessions) == [(seed, "ok") for seed in range(4)] + \
        [(seed, "cancelled") for seed in range(10, 14)]
    assert all(s.ended_at is not None for s in sessions)
