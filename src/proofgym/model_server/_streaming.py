"""Streamed chat completions (``"stream": true``): OpenAI's server-sent events, as the backend decodes.

The reply is ``text/event-stream``: one ``data: {chat.completion.chunk}`` event per piece, then ``data: [DONE]``.
Per choice: first a delta with the role (``{"role": "assistant", "content": ""}``), then content deltas as tokens are
decoded (the backend tells a :class:`~proofgym.model_server._generation.RowListener` of each token, so text leaves
the server while the rest is still being generated), then one chunk with the rest and ``finish_reason``. With
``stream_options.include_usage`` every chunk carries ``"usage": null`` and one last chunk holds ``"choices": []`` and
the usage. As vLLM does (``return_token_ids``, always on here), the role chunks carry the prompt's
``prompt_token_ids`` and each choice of a content chunk the ``token_ids`` it adds; logprobs ride with their tokens.

The streamed text equals the non-streamed reply for the same seed: a delta is only text that no later token can
change, so it is held back while it ends in a partial UTF-8 character (U+FFFD), in whitespace (detokenizers tidy
spaces before punctuation) or in what could be the start of a stop string; the final chunk sends the rest of the
text the backend settled on. A request offered tools is read as a tool call only once its row is done, so its
content is sent at the end too (as ``delta.tool_calls`` with ``finish_reason`` ``tool_calls`` when it is a call).

Errors found before the first token (a full queue, a failing model) are still JSON errors with their status; one
after the stream has started is an ``data: {"error": ...}`` event (OpenAI's clients raise it) before ``[DONE]``.
A client that leaves stops its rows, streamed or not.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.background import BackgroundTask
from starlette.responses import Response, StreamingResponse

from proofgym.http import SafeJSONResponse, json_bytes
from proofgym.model_server._server import (
    APIError,
    ChatCompletionRequest,
    _disconnect,
    _logprobs,
    _Plan,
    _tool_call,
)

if TYPE_CHECKING:
    from proofgym.model_server._generation import BatchingBackend, Generation, SamplingParams, TokenLogprob

logger = logging.getLogger("proofgym.model_server")

_END = object()  # the generation task is over (its result or its exception is on the task)
_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _Listener:
    """Hands the worker thread's news to the event loop's queue (the worker must not wait on the loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, events: asyncio.Queue[Any]) -> None:
        self.loop, self.events = loop, events

    def _put(self, event: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.events.put_nowait, event)
        except RuntimeError:  # the loop has closed: nobody is listening
            pass

    def token(self, index: int, token_id: int, logprob: TokenLogprob | None) -> None:
        self._put((index, token_id, logprob))

    def finished(self, index: int, generation: Generation) -> None:
        self._put((index, generation, None))


@dataclass
class _Choice:
    """What one choice has streamed: the token ids so far (and those not yet sent), the text sent."""

    ids: list[int] = field(default_factory=list)
    unsent_ids: list[int] = field(default_factory=list)
    unsent_logprobs: list[Any] = field(default_factory=list)
    sent: str = ""


async def stream_chat(body: ChatCompletionRequest, backend: BatchingBackend, request: Request, *, name: str,
                      cid: str | None, prompt_ids: list[int], rows: list[SamplingParams], n: int, plan: _Plan,
                      started: float) -> Response:
    """Start generating ``rows`` (one per choice, or one for all ``n`` choices of a greedy request) and answer with
    the event stream once the first token is there; a failure before that is the usual JSON error."""
    from proofgym.model_server._generation import BackendBusy

    loop = asyncio.get_running_loop()
    events: asyncio.Queue[Any] = asyncio.Queue()
    task = asyncio.ensure_future(backend.generate(prompt_ids, rows, _Listener(loop, events)))
    task.add_done_callback(lambda _: events.put_nowait(_END))
    first = asyncio.ensure_future(events.get())
    watcher = asyncio.ensure_future(_disconnect(request))
    try:
        try:
            await asyncio.wait({first, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            if not first.done():
                first.cancel()
        if not first.done() or first.cancelled():  # the client left before the first token
            await _stop(task)
            logger.info("serve-model: cid=%s: the client left before its reply; stopped decoding it", cid)
            return SafeJSONResponse({"error": {"message": "the client closed the request", "type": "client_closed",
                                               "param": None, "code": None}}, status_code=499)
        event = first.result()
        if event is _END:
            try:
                task.result()
            except BackendBusy as exc:
                raise APIError(503, f"the server is busy: {exc}; retry later", type="server_error") from None
    except BaseException:
        await _stop(task)
        raise
    stream = _Stream(body, backend, name=name, cid=cid, prompt_ids=prompt_ids, n=n, shared=len(rows) < n, plan=plan,
                     started=started)
    # The generator stops the generation when it ends; the background task, should it never have started.
    return StreamingResponse(stream.events(task, events, event), media_type="text/event-stream", headers=_HEADERS,
                             background=BackgroundTask(_stop, task))


async def _stop(task: asyncio.Future[Any]) -> None:
    """Cancel the generation (its rows are dropped at the next decoding step) and wait for it to be over."""
    if not task.done():
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class _Stream:
    """One request's events: the chunks of its choices as their tokens arrive."""

    def __init__(self, body: ChatCompletionRequest, backend: BatchingBackend, *, name: str, cid: str | None,
                 prompt_ids: list[int], n: int, shared: bool, plan: _Plan, started: float) -> None:
        self.backend, self.cid, self.prompt_ids, self.plan, self.started = backend, cid, prompt_ids, plan, started
        self.id = f"chatcmpl-{secrets.token_hex(12)}"
        self.created = int(time.time())
        self.name = name
        self.include_usage = bool(body.stream_options and body.stream_options.include_usage)
        self.logprobs = plan.top_logprobs is not None
        # A reply offered tools is read as a call only when it is whole; the text is then sent at the end.
        self.buffered = bool(plan.tool_names)
        self.stops = tuple(body.stop or ())
        self.hold = max((len(stop) for stop in self.stops), default=1) - 1
        self.eos = set(backend.eos_token_ids)
        self.n, self.shared = n, shared
        self.choices = [_Choice() for _ in range(n)]
        self.completion_tokens = 0

    def _chunk(self, choices: list[dict[str, Any]], **extra: Any) -> bytes:
        chunk: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                                 "model": self.name, "choices": choices, **extra}
        if self.include_usage and "usage" not in chunk:
            chunk["usage"] = None
        return b"data: " + json_bytes(chunk) + b"\n\n"

    async def events(self, task: asyncio.Future[Any], events: asyncio.Queue[Any], first: Any) -> AsyncIterator[bytes]:
        finished = 0
        try:
            for index in range(self.n):
                yield self._chunk([{"index": index, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                    "finish_reason": None}],
                                  prompt_token_ids=self.prompt_ids, proofgym={"cid": self.cid})
            event = first
            while event is not _END:
                row, item, logprob = event
                # A greedy request decodes one row for all its choices (row 0 stands for each).
                for index in range(self.n) if self.shared else (row,):
                    chunk = self._finished(index, item) if not isinstance(item, int) \
                        else self._token(index, item, logprob)
                    if chunk is not None:
                        yield chunk
                    if not isinstance(item, int):
                        finished += 1
                event = await events.get()
            try:
                task.result()
            except Exception as exc:  # noqa: BLE001 - the model failed mid-stream: say so in the stream
                logger.exception("serve-model: %s cid=%s: generation failed while streaming", self.id, self.cid)
                error = APIError(500, f"the server failed: {type(exc).__name__}", type="server_error")
                yield b"data: " + json_bytes(error.body()) + b"\n\n"
                yield b"data: [DONE]\n\n"
                return
            if self.include_usage:
                prompt = len(self.prompt_ids)
                yield self._chunk([], usage={"prompt_tokens": prompt, "completion_tokens": self.completion_tokens,
                                             "total_tokens": prompt + self.completion_tokens})
            yield b"data: [DONE]\n\n"
            logger.info("serve-model: %s cid=%s prompt_tokens=%d completion_tokens=%d n=%d %.3f s (streamed)",
                        self.id, self.cid, len(self.prompt_ids), self.completion_tokens, self.n,
                        time.perf_counter() - self.started)
        finally:
            if finished < self.n and not task.done():
                logger.info("serve-model: %s cid=%s: the client left mid-stream; stopped decoding it", self.id,
                            self.cid)
            await _stop(task)

    def _token(self, index: int, token: int, logprob: TokenLogprob | None) -> bytes | None:
        choice = self.choices[index]
        choice.unsent_ids.append(token)
        if logprob is not None:
            choice.unsent_logprobs.append(logprob)
        if token in self.eos:
            return None
        choice.ids.append(token)
        if self.buffered:
            return None
        text = self.backend.decode(choice.ids)
        safe = len(text)
        if self.stops:  # a stop string in the text ends the row before it; one may be forming at the end
            found = [at for at in (text.find(stop) for stop in self.stops) if at >= 0]
            safe = min(found) if found else safe - self.hold
        safe = min(safe, len(text.rstrip().rstrip("\ufffd").rstrip()))
        if safe <= len(choice.sent) or not text.startswith(choice.sent):
            return None
        delta, choice.sent = text[len(choice.sent):safe], text[:safe]
        return self._chunk([self._piece(index, {"content": delta}, None)])

    def _finished(self, index: int, generation: Generation) -> bytes:
        choice = self.choices[index]
        self.completion_tokens += len(generation.token_ids)
        finish = generation.finish_reason
        call = _tool_call(generation.text, self.plan.tool_names) \
            if self.plan.tool_names and finish != "length" else None
        delta: dict[str, Any]
        if call is not None:
            delta = {"tool_calls": [{"index": 0, **call}]}
            finish = "tool_calls"
        else:
            if not generation.text.startswith(choice.sent):  # never expected: the held-back rule is there for it
                logger.warning("serve-model: %s: choice %d streamed %r, which the final text %r does not start with",
                               self.id, index, choice.sent, generation.text)
            rest = generation.text[len(choice.sent):]
            choice.sent = generation.text
            delta = {"content": rest} if rest else {}
        # The ids the listener reported are the generation's: the row's tokens are the same either way.
        return self._chunk([self._piece(index, delta, finish)])

    def _piece(self, index: int, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = self.choices[index]
        piece: dict[str, Any] = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        if self.logprobs:
            piece["logprobs"] = {"content": _logprobs(choice.unsent_logprobs, self.backend)}
        piece["token_ids"] = choice.unsent_ids
        choice.unsent_ids, choice.unsent_logprobs = [], []
        return piece
