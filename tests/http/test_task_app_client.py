"""The one task-app client (``proofgym.http.TaskAppClient``) against a real HTTP server on loopback playing a task
app: the key header, ``GET /info`` failures as one-line errors, ``POST /rollout`` answers and failures (never an
exception), tries with backoff and the retry hook, the concurrency bound, and the RL reading of a full trace by its
correlation id."""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from _threaded_server import ThreadedServer
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from proofgym.http import (
    RL_ROLLOUT_TRIES,
    TaskAppClient,
    TaskAppError,
    task_app_healthy,
    traced_rollout,
)
from proofgym.traces import SessionTrace


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    text: str | None = None
    delay_s: float = 0.0


@dataclass
class FakeTaskApp:
    """Scripted answers to ``POST /rollout`` (then ``default``); records each request's body and key."""

    answers: list[Answer] = field(default_factory=list)
    default: Answer = field(default_factory=lambda: Answer(body={"ok": True}))
    keys: list[str | None] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    info_status: int = 200
    info_body: Any = None

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        app = FastAPI()

        @app.get("/health")
        async def health() -> dict[str, str]:
            return {"status": "ok"}

        @app.get("/info")
        async def info(request: Request) -> Response:
            self.keys.append(request.headers.get("x-api-key"))
            if self.info_status != 200:
                return JSONResponse({"detail": "no"}, status_code=self.info_status)
            return JSONResponse({"env_name": "grant_eligibility"} if self.info_body is None else self.info_body)

        @app.post("/rollout")
        async def rollout(request: Request) -> Response:
            self.keys.append(request.headers.get("x-api-key"))
            self.bodies.append(await request.json())
            with self.lock:
                answer = self.answers.pop(0) if self.answers else self.default
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            try:
                if answer.delay_s:
                    await asyncio.sleep(answer.delay_s)
            finally:
                with self.lock:
                    self.in_flight -= 1
            if answer.text is not None:
                return Response(answer.text, status_code=answer.status, media_type="application/json")
            return JSONResponse(answer.body, status_code=answer.status)

        self.app = app


@pytest.fixture
def task_app():
    fake = FakeTaskApp()
    with ThreadedServer(fake.app, what="a fake task app", lifespan="off", timeout_graceful_shutdown=1) as server:
        fake.url = server.url
        yield fake


def run(coroutine_function):
    return asyncio.run(coroutine_function())


def free_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens once the probe closes


def full_trace(cid: str, status: str = "ok") -> dict[str, Any]:
    session = SessionTrace(session_id="s1", run_id="r", env_name="grant_eligibility", seed=3, policy_id="p",
                           correlation_id=cid,
                           status=status)
    return {**session.to_dict(), "session_trace": {"v3": "dropped"}}


# -- /health and /info -----------------------------------------------------------------------------------------------

def test_health_is_true_when_the_app_answers_and_false_when_nothing_listens(task_app):
    assert task_app_healthy(task_app.url + "/")
    assert not task_app_healthy(free_url(), timeout_s=0.5)


def test_info_sends_the_key_and_returns_the_answer(task_app):
    async def main():
        async with TaskAppClient(task_app.url, api_key="k-1") as client:
            return await client.info()

    assert run(main) == {"env_name": "grant_eligibility"} and task_app.keys == ["k-1"]


@pytest.mark.parametrize("status, words", [(401, r"refused the API key \(401\)"), (503, "answered GET /info with 503")])
def test_info_refused_is_one_error_with_the_status(task_app, status, words):
    task_app.info_status = status

    async def main():
        async with TaskAppClient(task_app.url) as client:
            await client.info()

    with pytest.raises(TaskAppError, match=words) as caught:
        run(main)
    assert caught.value.status == status


def test_an_info_answer_that_is_not_a_json_object_is_one_error(task_app):
    task_app.info_body = ["grant_eligibility"]

    async def main():
        async with TaskAppClient(task_app.url) as client:
            await client.info()

    with pytest.raises(TaskAppError, match="answered GET /info with a body that is not a JSON object"):
        run(main)


def test_an_unreachable_app_is_named_without_its_credentials():
    url = free_url().replace("http://", "http://user:hunter2@")

    async def main():
        async with TaskAppClient(url) as client:
            await client.info()

    with pytest.raises(TaskAppError, match="cannot reach the task app") as caught:
        run(main)
    assert "hunter2" not in str(caught.value) and caught.value.status is None


# -- POST /rollout ---------------------------------------------------------------------------------------------------

def test_a_rollout_answer_is_its_json_held_to_the_untrusted_data_rule(task_app):
    task_app.answers = [Answer(body={"metrics": {"mean_return": 1.0}, "deep": [[[[1]]]]})]

    async def main():
        async with TaskAppClient(task_app.url) as client:
            return await client.post_rollout({"seed": 1})

    answer = run(main)
    assert answer.error is None and answer.status == 200 and answer.attempts == 1
    assert answer.data["metrics"] == {"mean_return": 1.0} and task_app.bodies == [{"seed": 1}]


@pytest.mark.parametrize("answer, error", [
    (Answer(422, {"detail": "max_turns must be positive"}), "HTTP 422: max_turns must be positive"),
    (Answer(503, text="overloaded"), "HTTP 503: overloaded"),
    (Answer(200, text="{not json"), "the task app's answer is not a rollout response"),
    (Answer(200, body=[1, 2]), "the task app's answer is not a rollout response: not a JSON object"),
])
def test_a_failed_rollout_is_an_answer_with_its_error_when_tried_once(task_app, answer, error):
    task_app.answers = [answer]

    async def main():
        async with TaskAppClient(task_app.url) as client:
            return await client.post_rollout({})

    result = run(main)
    assert result.data is None and result.error.startswith(error) and len(task_app.bodies) == 1


def test_a_lost_connection_is_an_answer_not_an_exception():
    async def main():
        async with TaskAppClient(free_url()) as client:
            return await client.post_rollout({})

    answer = run(main)
    assert answer.status is None and answer.error.startswith("ConnectError")


def test_5xx_is_tried_again_after_the_retry_hook_and_a_4xx_is_not(task_app):
    task_app.answers = [Answer(502, text="bad gateway"), Answer(500, text="oops"), Answer(409, {"detail": "busy"})]
    hooks = []

    async def main():
        async with TaskAppClient(task_app.url, tries=4, backoff_s=0.01, on_retry=lambda: hooks.append(1)) as client:
            return await client.post_rollout({}), client.retries

    answer, retries = run(main)
    assert answer.error == "HTTP 409: busy" and answer.attempts == 3
    assert retries == 2 and hooks == [1, 1] and len(task_app.bodies) == 3


def test_tries_run_out_saying_how_many(task_app):
    task_app.default = Answer(503, text="down")

    async def main():
        async with TaskAppClient(task_app.url, tries=3, backoff_s=0.01) as client:
            return await client.post_rollout({})

    answer = run(main)
    assert answer.error == "the task app failed 3 times: HTTP 503: down" and answer.attempts == 3
    assert RL_ROLLOUT_TRIES == 6


def test_concurrency_bounds_rollouts_in_flight(task_app):
    task_app.default = Answer(body=None)

    async def main():
        async with TaskAppClient(task_app.url, concurrency=2) as client:
            task_app.default = Answer(200, {"trace": full_trace("c")}, delay_s=0.2)
            return await asyncio.gather(*(client.rollout({}, seed, "c") for seed in range(6)))

    rollouts = run(main)
    assert task_app.peak == 2 and all(r.valid and r.seconds >= 0.2 for r in rollouts)


# -- the RL reading: a full trace by its correlation id ---------------------------------------------------------------

def test_a_full_trace_of_the_cid_is_a_valid_rollout_without_the_v3_copy():
    rollout = traced_rollout({"trace": full_trace("trace_a")}, 3, "trace_a")
    assert rollout.valid and rollout.trace.correlation_id == "trace_a" and rollout.trace.seed == 3


@pytest.mark.parametrize("data, error", [
    ({"trace": {"session_id": "s"}}, "no full trace"),
    ({"trace": full_trace("trace_b")}, "correlation id 'trace_b' is not 'trace_a'"),
    ({"trace": full_trace("trace_a", status="error")}, "rollout error"),
    ({"trace": full_trace("trace_a"), "aborted": True}, "rollout ok"),
    ({"trace": {"steps": "not a list"}}, "not a rollout response"),
])
def test_a_rollout_that_cannot_be_trained_on_is_invalid_saying_why(data, error):
    rollout = traced_rollout(data, 3, "trace_a", attempts=2)
    assert not rollout.valid and error in rollout.error and rollout.attempts == 2
