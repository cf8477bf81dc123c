"""The one task-app client: what eval and the RL trainer send to a task app (``proofgym serve`` or any app speaking
its protocol): ``GET /health``, ``GET /info``, ``POST /rollout``.

:class:`TaskAppClient` bounds rollouts in flight (``concurrency``), sends the key as ``X-API-Key``, and reads each
answer as untrusted data (:func:`~proofgym.core.bounded_json`). A rollout's refused request or lost connection is an
answer with an ``error``, never an exception; a connection that fails or a 5xx is tried again (``tries``) with
exponential backoff, after ``on_retry`` (the RL trainer restarts a local app that died). Eval reads an answer into
its seed result; the RL trainer reads the full trace it resolves by correlation id (:meth:`TaskAppClient.rollout`).

httpx is imported on first use.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from proofgym.core import bounded_json, redact_url
from proofgym.traces import SessionTrace

#: How much of an error body a message quotes.
DETAIL_CHARS = 500
#: The longest wait between two tries of a rollout.
MAX_BACKOFF_S = 8.0
#: How many times the RL trainer tries a rollout on a task app (eval tries once).
RL_ROLLOUT_TRIES = 6


class TaskAppError(RuntimeError):
    """The task app cannot be used: it is unreachable (``status`` ``None``), refused the key (401) or answered with
    another status. The message names the app's URL without its credentials."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RolloutAnswer:
    """One ``POST /rollout``'s end (after its tries): the answer's JSON object (``data``), or ``error``."""

    status: int | None
    data: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 1


@dataclass
class TaskAppRollout:
    """One rollout's end as the RL trainer reads it: its full ``trace`` (resolved by ``cid``) or the ``error`` that
    made it invalid."""

    seed: int
    cid: str
    trace: SessionTrace | None = None
    error: str | None = None
    attempts: int = 1
    seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.trace is not None and self.error is None


class TaskAppClient:
    """An async client of the task app at ``url`` (``async with``, or :meth:`aclose`).

    At most ``concurrency`` rollouts are in flight at once (``None``: no bound here). ``timeout_s`` bounds the wait
    for a rollout's answer (``None``: none; connecting has 30 s). A rollout is tried ``tries`` times when the
    connection fails or the app answers 5xx, waiting ``backoff_s * 2**n`` (at most 8 s) after the n-th failure and
    calling ``on_retry`` first (a blocking callable, run in a thread); :attr:`retries` counts those failures.
    """

    def __init__(self, url: str, *, api_key: str | None = None, concurrency: int | None = None,
                 timeout_s: float | None = None, tries: int = 1, backoff_s: float = 0.5,
                 on_retry: Callable[[], object] | None = None) -> None:
        import httpx

        self.url = url.rstrip("/")
        self.shown_url = redact_url(self.url)  # what messages say: never a credential the URL carries
        self.tries = tries
        self.backoff_s = backoff_s
        self.on_retry = on_retry
        self.retries = 0
        self._semaphore = asyncio.Semaphore(concurrency) if concurrency is not None else None
        limits = httpx.Limits() if concurrency is None else \
            httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self._client = httpx.AsyncClient(base_url=self.url, headers={} if api_key is None else {"X-API-Key": api_key},
                                         timeout=httpx.Timeout(30.0, read=timeout_s, pool=None), limits=limits)
        self._errors = httpx.HTTPError

    async def __aenter__(self) -> TaskAppClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def info(self) -> dict[str, Any]:
        """``GET /info``; raises :class:`TaskAppError` when the app is unreachable, refuses the key or fails."""
        try:
            response = await self._client.get("/info")
        except self._errors as exc:
            raise TaskAppError(f"cannot reach the task app at {self.shown_url}: {exc}") from None
        if response.status_code == 401:
            raise TaskAppError(f"the task app at {self.shown_url} refused the API key (401)", status=401)
        if response.status_code != 200:
            raise TaskAppError(f"the task app at {self.shown_url} answered GET /info with {response.status_code}: "
                               f"{response.text[:DETAIL_CHARS]}", status=response.status_code)
        try:
            data = bounded_json(response.json())
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise TaskAppError(f"the task app at {self.shown_url} answered GET /info with a body that is not a JSON "
                               "object", status=200)
        return data

    async def post_rollout(self, body: Mapping[str, Any]) -> RolloutAnswer:
        """``POST /rollout`` of ``body`` (within :attr:`tries`); never raises for what the app or the network does."""
        error = "no attempt"
        status: int | None = None
        for attempt in range(1, self.tries + 1):
            try:
                response = await self._client.post("/rollout", json=dict(body))
            except self._errors as exc:
                status, error = None, f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status < 500 or self.tries == 1:
                    return _answer(response, attempt)
                error = f"HTTP {status}: {_detail(response)}"
            if self.tries == 1:
                return RolloutAnswer(status, error=error)
            self.retries += 1
            if self.on_retry is not None:
                await asyncio.to_thread(self.on_retry)
            await asyncio.sleep(min(self.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S))
        return RolloutAnswer(status, error=f"the task app failed {self.tries} times: {error}", attempts=self.tries)

    async def rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> TaskAppRollout:
        """One rollout whose full trace (``record.trace_format`` ``full``) carries correlation id ``cid``; an
        error, an aborted rollout or a trace of another cid is an invalid rollout saying why."""
        if self._semaphore is None:
            return await self._timed(body, seed, cid)
        async with self._semaphore:
            return await self._timed(body, seed, cid)

    async def _timed(self, body: Mapping[str, Any], seed: int, cid: str) -> TaskAppRollout:
        started = time.monotonic()
        result = await self._rollout(body, seed, cid)
        result.seconds = time.monotonic() - started
        return result

    async def _rollout(self, body: Mapping[str, Any], seed: int, cid: str) -> TaskAppRollout:
        answer = await self.post_rollout(body)
        if answer.data is None:
            return TaskAppRollout(seed, cid, error=answer.error, attempts=answer.attempts)
        return traced_rollout(answer.data, seed, cid, answer.attempts)


def traced_rollout(data: Mapping[str, Any], seed: int, cid: str, attempts: int = 1) -> TaskAppRollout:
    """A rollout answer's full trace, checked against its correlation id ``cid``."""
    try:
        trace = data.get("trace")
        if not isinstance(trace, Mapping) or "steps" not in trace:
            return TaskAppRollout(seed, cid, error="the response has no full trace (record.trace_format full)",
                                  attempts=attempts)
        session = session_of(trace)
    except (ValueError, KeyError, TypeError) as exc:
        return TaskAppRollout(seed, cid, error=f"the task app's answer is not a rollout response: {exc}",
                              attempts=attempts)
    if session.correlation_id != cid:
        return TaskAppRollout(seed, cid, error=f"the trace's correlation id {session.correlation_id!r} is not "
                                               f"{cid!r}", attempts=attempts)
    if session.status != "ok" or data.get("aborted"):
        return TaskAppRollout(seed, cid, trace=session, error=f"rollout {session.status}: {session.error}",
                              attempts=attempts)
    return TaskAppRollout(seed, cid, trace=session, attempts=attempts)


def session_of(trace: Mapping[str, Any]) -> SessionTrace:
    """The session of a full trace in a rollout answer. Beside it, a task app of ``proofgym serve`` puts the same
    session in the reference's v3 shape as ``session_trace``, dropped here (an older app's trace has no such key)."""
    return SessionTrace.from_dict({key: value for key, value in trace.items() if key != "session_trace"})


def task_app_healthy(url: str, *, timeout_s: float = 2.0) -> bool:
    """Whether the task app at ``url`` answers ``GET /health`` with 200 (blocking; ``False`` when unreachable)."""
    import httpx

    try:
        return httpx.get(f"{url.rstrip('/')}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def _answer(response: Any, attempt: int) -> RolloutAnswer:
    status = response.status_code
    if status != 200:
        return RolloutAnswer(status, error=f"HTTP {status}: {_detail(response)}", attempts=attempt)
    try:
        # A remote app is outside our control: its answer is held to the one rule for untrusted data.
        data = bounded_json(response.json())
    except (ValueError, RecursionError) as exc:
        return RolloutAnswer(status, error=f"the task app's answer is not a rollout response: {exc}",
                             attempts=attempt)
    if not isinstance(data, dict):
        return RolloutAnswer(status, error="the task app's answer is not a rollout response: not a JSON object",
                             attempts=attempt)
    return RolloutAnswer(status, data=data, attempts=attempt)


def _detail(response: Any) -> str:
    """An error answer's ``detail`` (FastAPI's), else its text, cut to :data:`DETAIL_CHARS`."""
    try:
        payload = response.json()
        detail = payload.get("detail") if isinstance(payload, dict) else None
    except ValueError:
        detail = None
    return str(detail if detail is not None else response.text)[:DETAIL_CHARS]
