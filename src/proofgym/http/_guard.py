"""The ASGI guard in front of every proofgym server: the API key first, then the body size and shape, before any
parsing.

Doing these here, rather than in route dependencies, fixes the order a client sees: 401 for a
missing or wrong key (whatever the body), then 413 for an oversized body (declared in
``Content-Length`` or streamed without one), then 422 for JSON nested deeper than
:data:`~proofgym.core.MAX_DEPTH` levels or with an integer of more than
:data:`~proofgym.core.MAX_INT_DIGITS` digits (the parser would fail on such a body before any
field could be named, and what could be parsed could not be recorded exactly), and only then the
app's own 422 for an invalid body. A body within the limits is read once and replayed to the app.

What a refusal says is a :class:`Refusals`' (the task app's by default, also the reward server's); a server with an
error shape of its own (serve-model: OpenAI's) passes its own, and may read the key differently.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Collection, MutableMapping, NamedTuple, Sequence

from proofgym.core import MAX_DEPTH, JSONLimitProblem, json_limit_problem
from proofgym.http._auth import key_matches, presented_keys
from proofgym.http._json import json_bytes

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_AUTH_HINT = ("send the app's key as an X-API-Key header, in a comma-separated X-API-Keys header or as "
              "Authorization: Bearer <key>")
#: Bodies larger than this are checked for their shape in a worker thread, so the event loop stays free.
_CHECKED_INLINE_BYTES = 1 << 20


class Refusal(NamedTuple):
    """One answer of the guard: its status, its JSON content and headers of its own."""

    status: int
    content: Any
    headers: Sequence[tuple[bytes, bytes]] = ()


class Refusals:
    """How a :class:`RequestGuard` reads the key a request presents and what it answers when it refuses one: the
    task app's (``{"detail": ...}``, FastAPI's shape). A server with its own error shape overrides the methods."""

    def presented(self, headers: dict[str, str]) -> str | list[str] | None:
        """The key(s) a request presents (lower-case header names)."""
        return presented_keys(headers)

    def unauthorized(self, presented: str | list[str] | None) -> Refusal:
        """No key, or not the server's."""
        missing = not presented
        return Refusal(401, {"detail": f"{'missing' if missing else 'invalid'} API key: {_AUTH_HINT}"},
                       ((b"www-authenticate", b"Bearer"),))

    def bad_length(self, declared: str) -> Refusal | None:
        """A ``Content-Length`` that is not a byte count (``None``: read the body as if there were none)."""
        return Refusal(400, {"detail": f"invalid Content-Length header {declared!r}: expected a byte count"})

    def too_large(self, limit: int, *, size: int | None = None, digits: int | None = None,
                  streamed: bool = False) -> Refusal:
        """A body over ``limit`` bytes: declared as ``size`` bytes (or as a number of ``digits`` digits, too many to
        read), or ``streamed`` past the limit (``size``: the bytes so far)."""
        if digits is not None:
            # More digits than the limit has is too large, and is not converted: Python refuses to read an
            # integer of more than 4,300 digits (a ValueError, which was a 500).
            return Refusal(413, {"detail": f"request body too large: a Content-Length of {digits} digits, the limit "
                                           f"is {limit} bytes"})
        what = f"at least {size}" if streamed else str(size)
        return Refusal(413, {"detail": f"request body too large: {what} bytes, the limit is {limit}"})

    def timed_out(self, seconds: float) -> Refusal:
        """A body that has not arrived within ``seconds`` (a trickled body, or a longer ``Content-Length`` than
        what is sent)."""
        return Refusal(408, {"detail": f"the request body did not arrive within {seconds:g} s"})

    def too_deep(self, problem: JSONLimitProblem) -> Refusal:
        """JSON past the limits a body from outside must meet (:func:`~proofgym.core.json_limit_problem`)."""
        return Refusal(422, {"detail": [{"type": problem.kind, "loc": ["body", *problem.path],
                                         "msg": problem.message}]})


TASK_APP_REFUSALS = Refusals()


class RequestGuard:
    """ASGI middleware: 401 without the right key (except on ``open_paths``), 413 above ``max_body_bytes``,
    422 for a body nested more than ``max_depth`` levels deep or with an integer of more than 1000 digits
    (its ``detail`` names the limit and the path, as FastAPI's 422 does), 408 (and the connection closed) for
    a body that has not arrived within ``body_timeout_s`` seconds (``None``: no limit).

    ``api_key=None`` turns authentication off (the server only allows that on a loopback address). ``refusals``
    reads the key and words each refusal (default: the task app's, :class:`Refusals`).
    """

    def __init__(self, app: ASGIApp, *, api_key: str | None, max_body_bytes: int,
                 open_paths: Collection[str] = ("/health",), max_depth: int = MAX_DEPTH,
                 body_timeout_s: float | None = None, refusals: Refusals = TASK_APP_REFUSALS) -> None:
        if max_body_bytes < 1 or max_depth < 1:
            raise ValueError(f"max_body_bytes and max_depth must be at least 1, got {max_body_bytes} and {max_depth}")
        if body_timeout_s is not None and not body_timeout_s > 0:
            raise ValueError(f"body_timeout_s must be > 0, got {body_timeout_s}")
        self.body_timeout_s = body_timeout_s
        self.app = app
        self.api_key = api_key
        self.max_body_bytes = max_body_bytes
        self.max_depth = max_depth
        self.open_paths = frozenset(open_paths)
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        if self.api_key is not None and scope["path"] not in self.open_paths:
            presented = self.refusals.presented(headers)
            if not key_matches(self.api_key, presented):
                await _reply(send, self.refusals.unauthorized(presented))
                return
        declared = headers.get("content-length")
        if declared is not None and not declared.strip().isdigit():
            refusal = self.refusals.bad_length(declared)
            if refusal is not None:
                await _reply(send, refusal)
                return
        elif declared is not None:
            digits = declared.strip().lstrip("0") or "0"
            # More digits than the limit has is too large, and is not converted: Python refuses to read an
            # integer of more than 4,300 digits (a ValueError, which was a 500).
            if len(digits) > len(str(self.max_body_bytes)):
                await _reply(send, self.refusals.too_large(self.max_body_bytes, digits=len(digits)))
                return
            if int(digits) > self.max_body_bytes:
                await _reply(send, self.refusals.too_large(self.max_body_bytes, size=int(digits)))
                return
        body, more, size = [], True, 0
        first: Message | None = None
        deadline = None if self.body_timeout_s is None else asyncio.get_running_loop().time() + self.body_timeout_s
        while more:
            try:
                message = await _before(deadline, receive())
            except TimeoutError:  # a trickled body, or a Content-Length longer than what is sent
                await _reply(send, self.refusals.timed_out(self.body_timeout_s or 0.0))
                return
            if message["type"] != "http.request":  # the client went away: let the app see it
                first = message
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await _reply(send, self.refusals.too_large(self.max_body_bytes, size=size, streamed=True))
                return
            body.append(chunk)
            more = message.get("more_body", False)
        content = b"".join(body)
        problem = None
        if content and first is None:
            if len(content) <= _CHECKED_INLINE_BYTES:
                problem = json_limit_problem(content, max_depth=self.max_depth)
            else:
                problem = await asyncio.to_thread(json_limit_problem, content, max_depth=self.max_depth)
        if problem is not None:
            await _reply(send, self.refusals.too_deep(problem))
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first if first is not None else {"type": "http.request", "body": content, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _before(deadline: float | None, receiving: Awaitable[Message]) -> Message:
    if deadline is None:
        return await receiving
    # asyncio.timeout_at arms a timer on this task; wait_for would start a task per receive (three more turns
    # of the event loop per request, a tenth of a millisecond on a one-step rollout).
    async with asyncio.timeout_at(deadline):
        return await receiving


async def _reply(send: Send, refusal: Refusal) -> None:
    body = json_bytes(refusal.content)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *refusal.headers]
    if refusal.status in (408, 413):
        headers.append((b"connection", b"close"))  # the rest of the body is never read
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
