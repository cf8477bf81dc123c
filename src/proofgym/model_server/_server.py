"""``proofgym serve-model``: an OpenAI-compatible server over a local causal LM (transformers, or llama.cpp for GGUF).

``POST /v1/chat/completions`` (streamed with ``"stream": true``: :mod:`~proofgym.model_server._streaming`),
``GET /v1/models`` and ``GET /health`` (open without a key); ``/v1/responses`` (the Responses API) is a 404 that says
to use chat completions and how (:data:`RESPONSES_REFUSAL`). Every error is
OpenAI's shape, ``{"error": {"message", "type", "param", "code"}}``: 401 for a missing or wrong key, 413 for an
oversized body, 400 for a body that is not JSON or a request the model cannot serve (a prompt longer than its
context, ``max_tokens`` over the server's limit, an unsupported option), 422 for a body that does not match the
request model (``param`` names the field), 404 for another model's name or an unknown path, 503 when too many
rows are waiting. Beyond OpenAI: each choice carries ``prompt_token_ids`` and ``token_ids`` (trainers need them),
and the response carries ``proofgym.cid``, the request's ``?cid=`` query parameter (also logged).

Generation runs in the backend's worker thread (:class:`~proofgym.model_server._generation.BatchingBackend`: torch's
:class:`~proofgym.model_server._backend.GenerationBackend` or llama.cpp's), so
the event loop only parses, validates and answers. This module imports neither torch nor transformers: the
backend passed in (or :func:`serve_model`) does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, Union

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from proofgym.core import JSONLimitProblem
from proofgym.http import (
    Refusal,
    Refusals,
    RequestGuard,
    SafeJSONResponse,
    presented_key,
    redacted_logs,
)
from proofgym.policies import read_text_action

if TYPE_CHECKING:
    from proofgym.model_server._generation import BatchingBackend

logger = logging.getLogger("proofgym.model_server")

#: Choices per request at most, stop strings per request, characters per stop string, characters of a cid.
MAX_N = 64
MAX_STOP = 16
MAX_STOP_CHARS = 256
MAX_CID_CHARS = 256
#: The engines ``serve-model --backend`` offers: transformers on torch, and llama.cpp for GGUF files.
BACKENDS = ("torch", "llama_cpp")
#: Alternatives per token at most (OpenAI's limit).
MAX_TOP_LOGPROBS = 20
_OPEN_PATHS = frozenset({"/health"})
#: The answer to the Responses API (``/v1/responses``): serve-model speaks chat completions only.
RESPONSES_REFUSAL = ("serve-model speaks the Chat Completions API (POST /v1/chat/completions), not the Responses API "
                     "(/v1/responses): point the client at chat completions (inspect: -M responses_api=false with "
                     "an openai/ model, or proofgym's own model API: --model proofgym/<model> --model-base-url "
                     "http://HOST:PORT/v1; the openai client: client.chat.completions.create)")


# -- the request ---------------------------------------------------------------------------------------------

class _Model(BaseModel):
    # Unknown fields are ignored, as OpenAI-compatible servers do (clients send user, metadata, ...).
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, populate_by_name=True)


class TextPart(_Model):
    """A content part: only text (the model reads no images or audio)."""

    type: Literal["text"]
    text: str


class FunctionCall(_Model):
    name: str = Field(..., max_length=256)
    arguments: str = Field("{}", description="the arguments as JSON text")


class ToolCall(_Model):
    id: str | None = Field(None, max_length=256)
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(_Model):
    """One message of the conversation (``developer`` is read as ``system``)."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[TextPart], None] = None
    name: str | None = Field(None, max_length=256)
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = Field(None, max_length=256)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "system" if self.role == "developer" else self.role,
                               "content": self.content if isinstance(self.content, str)
                               else "".join(part.text for part in self.content or ())}
        if self.name is not None:
            out["name"] = self.name
        if self.tool_calls:
            out["tool_calls"] = [call.model_dump() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class FunctionSpec(_Model):
    name: str = Field(..., min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    parameters: dict[str, Any] | None = None


class ToolSpec(_Model):
    type: Literal["function"]
    function: FunctionSpec


class NamedFunction(_Model):
    name: str = Field(..., min_length=1, max_length=64)


class NamedToolChoice(_Model):
    type: Literal["function"]
    function: NamedFunction


class JSONSchemaFormat(_Model):
    name: str | None = Field(None, max_length=64)
    schema_: dict[str, Any] = Field(..., alias="schema")
    strict: bool | None = None


class ResponseFormat(_Model):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JSONSchemaFormat | None = None


class StreamOptions(_Model):
    include_usage: bool | None = None


class ChatCompletionRequest(_Model):
    """The body of ``POST /v1/chat/completions`` (OpenAI's, less penalties and logit bias)."""

    model: str | None = Field(None, max_length=1024)
    messages: list[ChatMessage] = Field(..., min_length=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: Union[str, list[str], None] = None
    n: int = Field(1, ge=1, le=MAX_N)
    seed: int | None = Field(None, ge=-(2**63), lt=2**64)
    tools: list[ToolSpec] | None = None
    tool_choice: Union[Literal["none", "auto", "required"], NamedToolChoice, None] = None
    response_format: ResponseFormat | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)
    stream: bool = False
    stream_options: StreamOptions | None = None
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    logit_bias: dict[str, float] | None = None

    @field_validator("stop")
    @classmethod
    def _stops(cls, value: str | list[str] | None) -> list[str]:
        stops = [value] if isinstance(value, str) else list(value or ())
        if len(stops) > MAX_STOP:
            raise ValueError(f"at most {MAX_STOP} stop strings, got {len(stops)}")
        for stop in stops:
            if not stop or len(stop) > MAX_STOP_CHARS:
                raise ValueError(f"each stop string must have 1 to {MAX_STOP_CHARS} characters")
        return stops


# -- errors --------------------------------------------------------------------------------------------------

class APIError(Exception):
    """A request the server refuses: its HTTP status, OpenAI error ``type``, the ``param`` at fault and a code."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 type: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.type, self.code = status, message, param, type, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def _error_response(error: APIError, headers: dict[str, str] | None = None) -> SafeJSONResponse:
    return SafeJSONResponse(error.body(), status_code=error.status, headers=headers)


def _param(loc: tuple[Any, ...] | list[Any]) -> str | None:
    parts = [part for part in loc if part != "body"]
    # pydantic names a union's branches in the path (``str``, ``list[TextPart]``): not fields of the body.
    text = ".".join(str(part) for part in parts if not (isinstance(part, str) and ("[" in part or part in
                                                                                   ("str", "literal"))))
    return text or None


# -- the guard -----------------------------------------------------------------------------------------------

class _OpenAIRefusals(Refusals):
    """What :class:`~proofgym.http.RequestGuard` answers in front of the app, in OpenAI's error shape: 401 without
    the key (``X-API-Key`` or ``Authorization: Bearer``; except on ``/health``), then 413 for a body over the limit
    (declared or streamed), 408 for one that has not arrived in time, then 400 for JSON nested too deep (or a
    1000-digit integer), before any parsing. A blank ``Content-Length`` is read as none."""

    def presented(self, headers: dict[str, str]) -> str | None:
        return presented_key(headers)

    def unauthorized(self, presented: str | list[str] | None) -> Refusal:
        what = "missing" if presented is None else "invalid"
        return _refusal(APIError(401, f"{what} API key: send it as Authorization: Bearer <key> or as an X-API-Key "
                                      "header", code="invalid_api_key"), ((b"www-authenticate", b"Bearer"),))

    def bad_length(self, declared: str) -> Refusal | None:
        declared = declared.strip()
        return _refusal(APIError(400, f"invalid Content-Length header {declared!r}")) if declared else None

    def too_large(self, limit: int, *, size: int | None = None, digits: int | None = None,
                  streamed: bool = False) -> Refusal:
        return _refusal(APIError(413, f"request body too large: the limit is {limit} bytes"))

    def timed_out(self, seconds: float) -> Refusal:
        return _refusal(APIError(408, f"the request body did not arrive within {seconds:g} s"))

    def too_deep(self, problem: JSONLimitProblem) -> Refusal:
        return _refusal(APIError(400, problem.message, param=_param(problem.path)))


_OPENAI_REFUSALS = _OpenAIRefusals()


def _refusal(error: APIError, headers: Sequence[tuple[bytes, bytes]] = ()) -> Refusal:
    return Refusal(error.status, error.body(), headers)


# -- the app -------------------------------------------------------------------------------------------------

def create_model_app(backend: BatchingBackend, *, api_key: str | None = None, max_tokens_limit: int = 1024,
                     max_body_bytes: int = 4 << 20, body_timeout_s: float | None = 30.0,
                     model_name: str | None = None, enable_lora: bool = False) -> Any:
    """The OpenAI-compatible app over ``backend`` (see the module docstring); an ASGI app for uvicorn.

    ``api_key=None`` serves without a key (:func:`serve_model` allows that on a loopback address only).
    ``max_tokens_limit`` bounds a request's ``max_tokens`` (and is the default, within the model's context).
    ``model_name`` is the id served (default: the backend's); a request naming another model gets 404.
    ``enable_lora`` adds vLLM's LoRA adapter endpoints (:mod:`~proofgym.model_server._adapters`; torch backend only).
    The caller owns ``backend`` (and closes it).
    """
    if max_tokens_limit < 1 or max_body_bytes < 1:
        raise ValueError(f"max_tokens_limit and max_body_bytes must be at least 1, got {max_tokens_limit} and "
                         f"{max_body_bytes}")
    name = model_name or backend.name
    created = int(time.time())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        with redacted_logs():  # the server's log lines never hold a credential a request carried (?api_key=)
            yield

    app = FastAPI(title="proofgym serve-model", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> SafeJSONResponse:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> SafeJSONResponse:
        errors = list(exc.errors())
        first: Mapping[str, Any] = errors[0] if errors else {"loc": (), "msg": "invalid request", "type": ""}
        if first.get("type") == "json_invalid":
            return _error_response(APIError(400, f"the body is not valid JSON: {first.get('msg')}"))
        param = _param(first.get("loc", ()))
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        return _error_response(APIError(422, f"{param or 'body'}: {first.get('msg')}{more}", param=param))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> SafeJSONResponse:
        message = "no such endpoint" if exc.status_code == 404 else str(exc.detail)
        return _error_response(APIError(exc.status_code, f"{request.method} {request.url.path}: {message}"),
                               headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _server_error(request: Request, exc: Exception) -> SafeJSONResponse:
        logger.exception("serve-model: %s %s failed", request.method, request.url.path)
        return _error_response(APIError(500, f"the server failed: {type(exc).__name__}", type="server_error"))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "model": name, "batches_decoded": backend.batches_decoded,
                "rows_decoded": backend.rows_decoded}

    adapters: Any = None
    if enable_lora:
        from proofgym.model_server._adapters import AdapterSet, add_adapter_routes

        adapters = AdapterSet(backend, name)  # type: ignore[arg-type]  # AdapterSet refuses a non-torch backend
        add_adapter_routes(app, adapters)

    @app.api_route("/v1/responses{rest:path}", methods=["GET", "POST", "DELETE"])
    async def responses(rest: str) -> SafeJSONResponse:
        raise APIError(404, RESPONSES_REFUSAL, code="unsupported_endpoint")

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [_model_card(name, created, backend.context_length),
                                           *(adapters.cards() if adapters is not None else ())]}

    @app.get("/v1/models/{model_id:path}")
    async def model(model_id: str) -> dict[str, Any]:
        card: dict[str, Any] | None = next((c for c in adapters.cards() if c["id"] == model_id), None) \
            if adapters is not None else None
        if card is not None:
            return card
        if model_id != name:
            raise APIError(404, f"the model {model_id!r} does not exist; this server serves {name!r}",
                           param="model", code="model_not_found")
        return _model_card(name, created, backend.context_length)

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
        started = time.perf_counter()
        cid = request.query_params.get("cid")
        if cid is not None and len(cid) > MAX_CID_CHARS:
            raise APIError(400, f"cid has {len(cid)} characters, the limit is {MAX_CID_CHARS}", param="cid")
        adapter = adapters.adapter_id(body.model) if adapters is not None else None
        if body.model is not None and body.model not in (name, backend.name) and adapter is None:
            raise APIError(404, f"the model {body.model!r} does not exist; this server serves {name!r}",
                           param="model", code="model_not_found")
        plan = _plan(body, backend, max_tokens_limit)
        messages = [message.as_dict() for message in body.messages]
        tools = [tool.model_dump() for tool in body.tools or ()] if plan.render_tools else []
        try:
            prompt_ids = await asyncio.to_thread(_prompt_ids, backend, messages, tools, plan.accepts_text)
        except ValueError as exc:
            raise APIError(400, str(exc), param="messages") from None
        if len(prompt_ids) >= backend.context_length:
            raise APIError(400, f"the prompt is {len(prompt_ids)} tokens; the model's context is "
                                f"{backend.context_length} tokens (and the reply needs at least one)",
                           param="messages", code="context_length_exceeded")
        params = await asyncio.to_thread(_sampling, body, plan, backend, len(prompt_ids), max_tokens_limit)
        if adapter is not None:  # decoded with that LoRA adapter, and answered under its name (as vLLM does)
            params = [dataclasses.replace(row, adapter=adapter) for row in params]
        served = body.model if adapter is not None and body.model is not None else name
        # Greedy choices are one answer: decode it once and give it to each (two rows of one batch could part on
        # a near-tie, llama.cpp's logits depending a little on where a row's cells lie).
        distinct = params[:1] if body.temperature == 0 else params
        if body.stream:
            from proofgym.model_server._streaming import stream_chat

            return await stream_chat(body, backend, request, name=served, cid=cid, prompt_ids=prompt_ids,
                                     rows=distinct, n=len(params), plan=plan, started=started)
        from proofgym.model_server._generation import BackendBusy

        try:
            generations = await _unless_client_leaves(backend.generate(prompt_ids, distinct), request)
        except BackendBusy as exc:
            raise APIError(503, f"the server is busy: {exc}; retry later", type="server_error") from None
        if generations is not None and len(generations) < len(params):
            generations = generations * len(params)
        if generations is None:  # nobody is there to read a reply; its rows were dropped from the batch
            logger.info("serve-model: cid=%s: the client left before its reply; stopped decoding it", cid)
            return SafeJSONResponse({"error": {"message": "the client closed the request", "type": "client_closed",
                                               "param": None, "code": None}}, status_code=499)
        completion_id = f"chatcmpl-{secrets.token_hex(12)}"
        choices = [_choice(index, generation, prompt_ids, plan, backend) for index, generation in
                   enumerate(generations)]
        completion_tokens = sum(len(generation.token_ids) for generation in generations)
        logger.info("serve-model: %s cid=%s prompt_tokens=%d completion_tokens=%d n=%d %.3f s", completion_id,
                    cid, len(prompt_ids), completion_tokens, len(generations), time.perf_counter() - started)
        return SafeJSONResponse({
            "id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": served,
            "choices": choices,
            "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": completion_tokens,
                      "total_tokens": len(prompt_ids) + completion_tokens},
            "proofgym": {"cid": cid},
        })

    return RequestGuard(app, api_key=api_key, max_body_bytes=max_body_bytes, open_paths=_OPEN_PATHS,
                        body_timeout_s=body_timeout_s, refusals=_OPENAI_REFUSALS)


def _model_card(name: str, created: int, context_length: int) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": "proofgym",
            "max_model_len": context_length}


class _Plan:
    """What a request asks beyond sampling: the tools to offer, whether to read a reply as a call, the JSON
    schema to constrain to (``None`` with ``json_output``: any JSON object)."""

    def __init__(self, *, render_tools: bool, tool_names: tuple[str, ...], accepts_text: bool, json_output: bool,
                 schema: dict[str, Any] | None, top_logprobs: int | None) -> None:
        self.render_tools, self.tool_names, self.accepts_text = render_tools, tool_names, accepts_text
        self.json_output, self.schema, self.top_logprobs = json_output, schema, top_logprobs


async def _unless_client_leaves(work: Any, request: Request) -> Any:
    """``work``'s result, or None once the client has disconnected (``work`` is then cancelled, so the backend drops
    its rows at the next decoding step). A client that times out and retries would otherwise queue its retry behind
    the abandoned decode, time out again, and so on."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnect(request))
    try:
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server is shutting down
            task.cancel()
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return None
    finally:
        watcher.cancel()


async def _disconnect(request: Request) -> None:
    """Returns when the client disconnects (the body has been read, so the next ASGI message says so)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _plan(body: ChatCompletionRequest, backend: BatchingBackend, max_tokens_limit: int) -> _Plan:
    """Refuse what the server does not do (400 naming the option) and settle the tool and format options."""
    if body.stream_options is not None and not body.stream:
        raise APIError(400, "stream_options needs stream: true", param="stream_options")
    for option in ("frequency_penalty", "presence_penalty"):
        if getattr(body, option):
            raise APIError(400, f"{option} is not supported: leave it out or send 0", param=option)
    if body.logit_bias:
        raise APIError(400, "logit_bias is not supported: leave it out", param="logit_bias")
    max_tokens = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
    if max_tokens is not None and max_tokens > max_tokens_limit:
        raise APIError(400, f"max_tokens is {max_tokens}, more than this server's limit of {max_tokens_limit}",
                       param="max_completion_tokens" if body.max_completion_tokens is not None else "max_tokens")
    if body.top_logprobs is not None and not body.logprobs:
        raise APIError(400, "top_logprobs needs logprobs: true", param="top_logprobs")
    tools = body.tools or []
    names = tuple(tool.function.name for tool in tools)
    if len(set(names)) != len(names):
        raise APIError(400, "two tools have the same name", param="tools")
    choice = body.tool_choice if body.tool_choice is not None else "auto"
    if not tools and choice not in ("auto", "none"):
        raise APIError(400, "tool_choice needs tools", param="tool_choice")
    forced: tuple[str, ...] = ()
    if isinstance(choice, NamedToolChoice):
        if choice.function.name not in names:
            raise APIError(400, f"tool_choice names {choice.function.name!r}, which is not one of the tools",
                           param="tool_choice")
        forced = (choice.function.name,)
    elif choice == "required":
        forced = names
    schema: dict[str, Any] | None = None
    json_output = False
    if body.response_format is not None and body.response_format.type != "text":
        json_output = True
        if body.response_format.type == "json_schema":
            if body.response_format.json_schema is None:
                raise APIError(400, "response_format json_schema needs json_schema.schema",
                               param="response_format.json_schema")
            schema = body.response_format.json_schema.schema_
    if (forced or json_output) and not backend.constrained_decoding:
        what = "response_format json" if json_output else "tool_choice required or a named function"
        raise APIError(400, f"{what} needs constrained decoding, which the {backend.engine} backend does not do: "
                            "use the torch backend (serve-model --backend torch)",
                       param="response_format" if json_output else "tool_choice")
    if forced:
        if backend.native_tools:
            raise APIError(400, "tool_choice required or a named function is not supported for this model (its chat "
                                "template renders tools natively): use auto", param="tool_choice")
        if json_output:
            raise APIError(400, "tool_choice required and response_format json cannot both apply",
                           param="tool_choice")
        # The JSON-in-text call form, enforced: {"tool": one of the names, "args": {...}}.
        json_output = True
        schema = {"type": "object", "properties": {"tool": {"type": "string", "enum": list(forced)},
                                                   "args": {"type": "object"}}, "required": ["tool", "args"]}
    return _Plan(render_tools=bool(tools) and choice != "none", tool_names=names if choice != "none" else (),
                 accepts_text=not forced, json_output=json_output, schema=schema,
                 top_logprobs=(body.top_logprobs or 0) if body.logprobs else None)


def _prompt_ids(backend: BatchingBackend, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                accepts_text: bool) -> list[int]:
    return backend.encode(backend.render(messages, tools, accepts_text=accepts_text))


def _sampling(body: ChatCompletionRequest, plan: _Plan, backend: BatchingBackend, prompt_tokens: int,
              max_tokens_limit: int) -> list[Any]:
    """Each choice's :class:`~proofgym.model_server._backend.SamplingParams` (run in a thread: compiling a JSON
    schema constraint may take a moment)."""
    from proofgym.model_server._generation import SamplingParams, row_seed

    constraint = None
    if plan.json_output:
        from proofgym.model_server._constrained import ConstraintError, JSONConstraint

        try:
            constraint = JSONConstraint(plan.schema, backend.vocabulary())
        except ConstraintError as exc:
            raise APIError(400, str(exc), param="response_format") from None
    requested = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
    max_tokens = min(requested or max_tokens_limit, backend.context_length - prompt_tokens)
    seed = body.seed if body.seed is not None else secrets.randbits(63)
    return [SamplingParams(max_tokens=max_tokens, temperature=body.temperature, top_p=body.top_p,
                           stop=tuple(body.stop or ()), seed=row_seed(seed, index), top_logprobs=plan.top_logprobs,
                           constraint=constraint.start() if constraint is not None else None)
            for index in range(body.n)]


def _choice(index: int, generation: Any, prompt_ids: list[int], plan: _Plan,
            backend: BatchingBackend) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": generation.text}
    finish = generation.finish_reason
    call = _tool_call(generation.text, plan.tool_names) if plan.tool_names and finish != "length" else None
    if call is not None:
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    choice: dict[str, Any] = {"index": index, "message": message, "finish_reason": finish, "logprobs": None}
    if generation.logprobs is not None:
        choice["logprobs"] = {"content": _logprobs(generation.logprobs, backend)}
    choice["prompt_token_ids"] = prompt_ids
    choice["token_ids"] = generation.token_ids
    return choice


def _tool_call(text: str, names: tuple[str, ...]) -> dict[str, Any] | None:
    """The reply as an OpenAI tool call when it holds exactly one call of an offered tool: the JSON-in-text form
    ``{"tool", "args"}`` our policies read, or the ``{"name", "arguments"}`` object chat templates teach."""
    action = read_text_action(text).action
    if isinstance(action, dict) and action.get("tool") in names and isinstance(action.get("args", {}), dict):
        name, arguments = action["tool"], action.get("args", {})
    else:
        found = _named_call(text, names)
        if found is None:
            return None
        name, arguments = found
    return {"id": f"call_{secrets.token_hex(12)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def _named_call(text: str, names: tuple[str, ...], max_starts: int = 64) -> tuple[str, dict[str, Any]] | None:
    decoder = json.JSONDecoder()
    calls = []
    position, starts = text.find("{"), 0
    while position != -1 and starts < max_starts:
        starts += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and value.get("name") in names:
            arguments = value.get("arguments", value.get("parameters", {}))
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except (ValueError, RecursionError):
                    arguments = None
            if isinstance(arguments, dict):
                calls.append((value["name"], arguments))
        position = text.find("{", end)
    return calls[0] if len(calls) == 1 else None


def _logprobs(entries: list[Any], backend: BatchingBackend) -> list[dict[str, Any]]:
    ids = sorted({entry.token_id for entry in entries} | {token for entry in entries for token, _ in entry.top})
    texts = dict(zip(ids, backend.token_texts(ids)))

    def item(token: int, logprob: float) -> dict[str, Any]:
        text = texts[token]
        return {"token": text, "logprob": logprob, "bytes": list(text.encode("utf-8")), "token_id": token}

    return [{**item(entry.token_id, entry.logprob), "top_logprobs": [item(token, lp) for token, lp in entry.top]}
            for entry in entries]


# -- running it ----------------------------------------------------------------------------------------------

def serve_model(
    spec: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    max_batch_size: int = 8,
    batch_window_ms: float = 5.0,
    max_tokens_limit: int = 1024,
    threads: int | None = None,
    device: str = "cpu",
    max_body_bytes: int = 4 << 20,
    log_level: str = "info",
    header_timeout_s: float = 10.0,
    body_timeout_s: float = 30.0,
    max_connections: int = 256,
    backend: str = "torch",
    enable_lora: bool = False,
    served_model_name: str | None = None,
) -> None:
    """Load ``spec`` (see :func:`~proofgym.model_server._backend.load_model`) and serve it on ``host:port`` until
    interrupted. ``backend`` is the engine: ``torch`` (transformers) or ``llama_cpp`` (a GGUF file, through
    llama-cpp-python; ``device`` must then be ``cpu``); ``enable_lora``: vLLM's LoRA adapter endpoints (torch
    only); ``served_model_name``: the id served (vLLM's ``--served-model-name``; default ``spec``). ``api_key``
    defaults to the environment
    (``ENVIRONMENT_API_KEY``, ...); without one only a loopback address is served. Raises
    :class:`~proofgym.http.ServeError` before loading anything when the server would be reachable from other
    machines without a key, or when the backend or the model cannot be had."""
    import uvicorn

    from proofgym.http import ServeError, serving_key, uvicorn_limits

    key = serving_key(host, port, api_key, could="use the model")
    try:
        limits = uvicorn_limits(header_timeout_s=header_timeout_s, max_connections=max_connections)
    except ValueError as exc:
        raise ServeError(str(exc)) from None
    if backend not in BACKENDS:
        raise ServeError(f"--backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if backend == "llama_cpp" and enable_lora:
        raise ServeError("--enable-lora: the llama_cpp backend serves no LoRA adapters; use --backend torch")
    if backend == "llama_cpp" and device != "cpu":
        raise ServeError(f"--device {device!r}: the llama_cpp backend runs on the CPU; --device is the torch "
                         "backend's")
    from proofgym.model_server._generation import ModelLoadError

    engine: BatchingBackend
    try:
        if backend == "llama_cpp":
            from proofgym.model_server._llama_cpp import LlamaCppBackend

            engine = LlamaCppBackend.load(spec, max_batch_size=max_batch_size, batch_window_ms=batch_window_ms,
                                          threads=threads)
        else:
            from proofgym.model_server._backend import GenerationBackend, load_model

            engine = GenerationBackend(load_model(spec, device=device), max_batch_size=max_batch_size,
                                       batch_window_ms=batch_window_ms, threads=threads)
        app = create_model_app(engine, api_key=key, max_tokens_limit=max_tokens_limit,
                               max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s, enable_lora=enable_lora,
                               model_name=served_model_name)
    except (ModelLoadError, ValueError) as exc:
        raise ServeError(str(exc)) from None
    logger.info("serve-model: %s with %s (context %d tokens) on %s:%d", spec, backend, engine.context_length, host,
                port)
    try:
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                                      access_log=False, **limits)).run()
    finally:
        engine.close()
