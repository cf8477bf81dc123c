"""serve-reward: an HTTP reward server speaking OpenRLHF's remote reward-model protocol.

``POST /get_reward`` takes ``{"query": [str], "prompts": [str], "labels": [...]}`` and answers
``{"rewards": [float], "scores": [float], "extra_logs": {name: [float]}}``, one entry per query.

- ``query[i]`` is the prompt and the response as one string (OpenRLHF sends them concatenated).
  The response is ``query[i]`` after ``prompts[i]`` when that is a prefix; otherwise the parsers'
  :func:`~proofgym.parsers.response_text` locates the prompt (whitespace-insensitive, chat-template
  aware). The prompt, with its example answer block, is never parsed as the answer. ``prompts`` is
  required: without it the start of the response cannot be known.
- ``labels[i]`` (optional, OpenRLHF's ``--label_key`` column) is the reference: a JSON object
  ``{"gold": ..., "source_facts": {...}}`` or its JSON text, or a plain string taken as the gold
  decision, or ``null``.
- ``rewards`` are the shaped rewards. OpenRLHF needs a number for every item, so an invalid
  verification gets the server's *invalid fill* (default 0.0) and is flagged in ``extra_logs``
  (``invalid`` = 1.0). ``scores`` are 0/1 correctness (``correct`` component), which OpenRLHF's
  dynamic filtering reads. ``extra_logs`` carries each item's components and outcome indicators.
- Concurrent requests are verified together (:mod:`proofgym.reward_server._microbatch`): OpenRLHF sends one
  sample per request, so the requests arriving within ``batch_window_s`` (default 5 ms) of the oldest waiting
  one, up to ``batch_max_items`` samples, go through the verification runtime as one batch (deduplicated,
  cached, verifier calls filled up to their batch size), parsed in a worker thread so the event loop stays
  free. Each request still gets its own answer, in its own order; a request whose samples make the batch
  raise is scored alone, so it cannot fail the others. ``batch_window_s=0`` scores every request alone.
- ``GET /health`` needs no key; everything else needs the API key when one is set, checked (in constant
  time) before the body is read: ``X-API-Key: <key>``, ``Authorization: Bearer <key>``, or, the OpenRLHF way
  (its client sends no headers), in the URL: ``--reward.remote_url http://host:8001/get_reward?key=<key>``
  (percent-encode characters other than letters, digits and ``-._~``). The ``key`` parameter is taken out of
  the request before anything else sees it, so it appears in no error body or trace; while the app runs, every
  log line of the server (uvicorn's access and trace lines, those it writes before the app runs: a 503 at the
  connection limit) has every credential-looking parameter (``key``, ``api_key``, ``token``, ``sig``...)
  redacted (:func:`~proofgym.http.redacted_logs`). A header key, when sent, is the one checked.
- Bodies above ``max_body_bytes`` are refused with 413; malformed bodies with 422 and the field paths: JSON
  nested more than 64 levels deep or with an integer of more than 1000 digits (refused before parsing, by the
  guard), JSON that does not parse, fields of the wrong type, lists longer than ``max_items`` (refused before
  validation), labels that carry no reference. A failure of the reward path is a JSON 500 for its request.
- ``POST /get_reward`` is answered straight from ASGI (FastAPI publishes it): FastAPI's per-request machinery
  costs more than a one-sample answer. A well-formed body (lists of strings of one length) is taken without the
  pydantic model, which validates (and names the fields of) every other body; the answer's JSON is written
  without the response model (the same bytes). ``GET /health`` and the rest are FastAPI's.
- ``max_connections`` (default 1024, a connection per sample OpenRLHF awaits) fits the open-file limit:
  :func:`serve_reward` raises the soft ``RLIMIT_NOFILE`` as far as the hard one, else lowers the cap, with a warning.

fastapi and uvicorn are imported inside the functions that need them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from proofgym.core import bounded_json
from proofgym.parsers import response_text
from proofgym.reward_server._microbatch import MicroBatcher
from proofgym.rewards import COMPONENTS, Reference, RewardFunction, label_text

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_ITEMS = 16_384
#: A body of up to 64 MiB must arrive within this (about 1.1 MB/s); headers within 10 s, as for the task app.
DEFAULT_BODY_TIMEOUT_S = 60.0
DEFAULT_HEADER_TIMEOUT_S = 10.0
#: Connections held at once. OpenRLHF 0.11.2 posts every sample on a connection of its own (an aiohttp session per
#: request), and a 503 at the cap costs it a 1 s retry: the cap must cover the samples it awaits rewards for at
#: once (a GRPO step's rollouts). Each connection is a file descriptor: :func:`serve_reward` raises the soft
#: ``RLIMIT_NOFILE`` (up to the hard one) to hold them, or lowers the cap under it, with a warning.
DEFAULT_MAX_CONNECTIONS = 1024
#: Descriptors kept beside the connections: the listening socket, logs, the verifiers' own connections and files.
FD_HEADROOM = 256
#: Environment variables read for the server's API key, first non-empty wins.
REWARD_KEY_ENV_VARS = ("PROOFGYM_API_KEY", "ENVIRONMENT_API_KEY")
#: How long concurrent requests are gathered into one verification batch: a few ms against a verifier round
#: trip of tens of ms (and a generation of seconds), long enough for a burst of one-sample requests to meet.
DEFAULT_BATCH_WINDOW_S = 0.005
MAX_BATCH_WINDOW_S = 1.0
#: Samples per micro-batch: a GRPO step's worth of requests (e.g. 64 prompts x 8) in one runtime batch.
DEFAULT_BATCH_MAX_ITEMS = 512
#: The URL query parameter OpenRLHF's ``--reward.remote_url`` carries the key in.
KEY_PARAMETER = "key"
_AUTH_HINT = (f"send the server's key as an X-API-Key header, as Authorization: Bearer <key>, or in the URL as "
              f"?{KEY_PARAMETER}=<key> (OpenRLHF: --reward.remote_url "
              f"http://host:port/get_reward?{KEY_PARAMETER}=<key>)")

logger = logging.getLogger("proofgym.reward_server")


def reward_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """The reward server's API key from ``PROOFGYM_API_KEY`` (or ``ENVIRONMENT_API_KEY``), or ``None``."""
    from proofgym.http import api_key_from_env

    return api_key_from_env(environ, names=REWARD_KEY_ENV_VARS)


class RewardRequest(BaseModel):
    """OpenRLHF's remote reward request. Unknown keys are ignored (OpenRLHF versions differ)."""

    model_config = ConfigDict(extra="ignore")

    query: list[str] = Field(..., description="prompt + response, one string per item")
    prompts: list[str] = Field(..., description="the prompt of each item, as sent to the policy")
    labels: list[Any] | None = Field(None, description="each item's reference: gold decision, or "
                                                       "{gold, source_facts} (object or JSON text)")

    @model_validator(mode="after")
    def _same_lengths(self) -> RewardRequest:
        n = len(self.query)
        if len(self.prompts) != n:
            raise ValueError(f"prompts has {len(self.prompts)} items but query has {n}: one prompt per query")
        if self.labels is not None and len(self.labels) != n:
            raise ValueError(f"labels has {len(self.labels)} items but query has {n}: one label per query")
        return self


class RewardResponse(BaseModel):
    """What OpenRLHF reads back: ``rewards`` (advantages), ``scores`` (dynamic filtering), ``extra_logs``."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


def split_response(query: str, prompt: str) -> str:
    """The response part of ``query`` (prompt + response): what follows ``prompt`` when it is a
    prefix, else what :func:`~proofgym.parsers.response_text` finds after the prompt."""
    if prompt and query.startswith(prompt):
        return query[len(prompt):]
    try:
        return response_text(query, prompt)
    except TypeError:  # unreachable for two strings; kept so a parser change cannot raise here
        return query


def parse_label(label: Any, index: int) -> Reference:
    """The reference a label carries; ``ValueError`` names ``labels[index]`` and what was expected."""
    where = f"labels[{index}]"
    if label is None:
        return Reference()
    if isinstance(label, str):
        label = label_text(label, where)
    if not isinstance(label, Mapping):
        raise ValueError(f"{where}: expected a gold decision (string), an object with gold / source_facts, "
                         f"its JSON text, or null; got {type(label).__name__}")
    try:
        return Reference.from_value(label)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def build_response(items: list[Any], *, invalid_fill: float) -> RewardResponse:
    """The OpenRLHF answer for scored items."""
    return RewardResponse(**response_content(items, invalid_fill=invalid_fill))


def response_content(items: list[Any], *, invalid_fill: float) -> dict[str, Any]:
    """:func:`build_response`'s content as plain JSON values (every number a float), without the model."""
    rewards, scores = [], []
    logs: dict[str, list[float]] = {name: [] for name in _LOG_NAMES}
    for item in items:
        reward = invalid_fill if item.reward is None else float(item.reward)
        components = item.components
        rewards.append(reward)
        for name in COMPONENTS:
            logs[name].append(float(components.get(name, 0.0)))
        scores.append(logs["correct"][-1])
        logs["invalid"].append(float(item.outcome == "invalid"))
        logs["abstained"].append(float(item.reward is None))
        logs["format_error"].append(float(item.outcome == "format_error"))
    return {"rewards": rewards, "scores": scores, "extra_logs": logs}


def response_bytes(content: dict[str, Any]) -> bytes:
    """A 200's body: finite numbers only (``response_content`` of a finite ``invalid_fill``), so the plain encoder,
    as Starlette's ``JSONResponse`` renders it."""
    return _ENCODE(content).encode()


def _safe_bytes(content: Any) -> bytes:
    """Any content as JSON (``proofgym.http.SafeJSONResponse``'s body): what it cannot encode, bounded first."""
    return json.dumps(bounded_json(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


_LOG_NAMES = (*COMPONENTS, "invalid", "abstained", "format_error")
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _take_key_parameters(scope: dict[str, Any]) -> list[str]:
    """The ``key`` parameters of the request's query string, removed from it (in place: uvicorn's access log
    prints this scope's query string)."""
    query: bytes = scope.get("query_string") or b""
    if not query:
        return []
    keys, kept = [], []
    for part in query.split(b"&"):
        name, _, value = part.partition(b"=")
        if name == b"key" or unquote_plus(name.decode("latin-1")) == KEY_PARAMETER:
            # Most keys need no decoding: the unquoting only where an escape or a '+' is.
            keys.append(value.decode("latin-1") if value.isalnum() else
                        unquote_plus(value.decode("latin-1"), encoding="utf-8", errors="surrogateescape"))
        else:
            kept.append(part)
    if keys:
        scope["query_string"] = b"&".join(kept)
    return keys


class RewardGuard:
    """ASGI middleware in front of the reward app: the API key (a header or the URL's ``key`` parameter, compared
    in constant time; 401 otherwise, except on ``open_paths``), then :class:`~proofgym.http.RequestGuard`'s body
    limits. The ``key`` parameter is removed from every request, keyed or not, before anything logs or sees it.

    ``app`` is the FastAPI app; ``handler`` (default: ``app``) is the ASGI app the requests that pass go to."""

    def __init__(self, app: Any, *, api_key: str | None, max_body_bytes: int, body_timeout_s: float | None,
                 open_paths: tuple[str, ...] = ("/health",), handler: Any = None) -> None:
        from proofgym.http import RequestGuard

        self.app = app
        self.api_key = api_key
        self.open_paths = frozenset(open_paths)
        self._limits = RequestGuard(app if handler is None else handler, api_key=None, max_body_bytes=max_body_bytes,
                                    body_timeout_s=body_timeout_s)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query_keys = _take_key_parameters(scope)
            if self.api_key is not None and scope["path"] not in self.open_paths:
                problem = self._refusal(scope, query_keys, self.api_key)
                if problem is not None:
                    from proofgym.http import SafeJSONResponse

                    await SafeJSONResponse({"detail": problem}, status_code=401,
                                           headers={"www-authenticate": "Bearer"})(scope, receive, send)
                    return
        await self._limits(scope, receive, send)

    def _refusal(self, scope: Any, query_keys: list[str], api_key: str) -> str | None:
        from proofgym.http import key_matches, presented_key

        # The task app's reading of the headers (X-API-Key, else Authorization: Bearer), names lower-cased.
        key = presented_key({name.lower().decode("latin-1"): value.decode("latin-1")
                             for name, value in scope["headers"] if name.lower() in _KEY_HEADERS})
        if key is None:
            if len(query_keys) > 1:
                return f"the {KEY_PARAMETER} URL parameter is given {len(query_keys)} times: give it once"
            key = (query_keys[0].strip() or None) if query_keys else None
        if key_matches(api_key, key):
            return None
        return f"{'missing' if key is None else 'invalid'} API key: {_AUTH_HINT}"


_KEY_HEADERS = (b"x-api-key", b"authorization")


def create_reward_app(source: Any, *, api_key: str | None = None, invalid_fill: float = 0.0,
                      max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, max_items: int = DEFAULT_MAX_ITEMS,
                      max_concurrent_requests: int = 8,
                      body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
                      batch_window_s: float = DEFAULT_BATCH_WINDOW_S,
                      batch_max_items: int = DEFAULT_BATCH_MAX_ITEMS) -> Any:
    """The ASGI app serving ``source``'s reward path (a RunConfig, which the app owns and closes on
    shutdown, or a RewardFunction, which the caller closes); its ``.app`` is the FastAPI app.

    ``api_key=None`` turns authentication off; :func:`serve_reward` only allows that on loopback. A body that
    has not arrived ``body_timeout_s`` seconds after its headers gets 408 and its connection is closed.
    Requests arriving within ``batch_window_s`` seconds of each other are verified as one batch of at most
    ``batch_max_items`` samples (a larger request alone); ``batch_window_s=0`` verifies each request alone. At most
    ``max_concurrent_requests`` scoring calls (a micro-batch is one) run at once.
    """
    from fastapi import FastAPI, Request

    from proofgym.http import error_responses, publish, redacted_logs, require_key
    from proofgym.reward_server._schema import query_key, reward_contract

    if not math.isfinite(invalid_fill):
        raise ValueError(f"invalid_fill must be a finite number, got {invalid_fill}")
    if max_items < 1 or max_concurrent_requests < 1:
        raise ValueError("max_items and max_concurrent_requests must be at least 1")
    _check_batching(batch_window_s, batch_max_items)
    owns = not isinstance(source, RewardFunction)
    reward_fn: RewardFunction = source.reward_function() if owns else source
    name = getattr(source, "name", None) or "reward"

    def score(samples: list[tuple[str, str, Reference]]) -> list[Any]:
        # Splitting and parsing are CPU work: run in a worker thread, the event loop stays free.
        responses = [split_response(query, prompt) for query, prompt, _ in samples]
        return reward_fn.score(None, responses, [reference for _, _, reference in samples])

    batcher = MicroBatcher(score, window_s=batch_window_s, max_items=batch_max_items,
                           max_batches=max_concurrent_requests) if batch_window_s > 0 else None
    gate = asyncio.Semaphore(max_concurrent_requests)

    async def scored(samples: list[tuple[str, str, Reference]]) -> list[Any]:
        if batcher is not None:
            return await batcher.submit(samples)
        async with gate:
            return await asyncio.to_thread(score, samples)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        with redacted_logs():
            try:
                yield
            finally:
                if owns:
                    await asyncio.to_thread(reward_fn.close)

    app = FastAPI(title="proofgym reward server (OpenRLHF protocol)", lifespan=lifespan)
    app.state.reward_fn = reward_fn
    app.state.batcher = batcher
    publish(app, reward_contract(max_items), *([require_key(("/health",)), query_key()] if api_key is not None else []))

    @app.get("/health", responses=error_responses(keyed=False))
    async def health() -> dict[str, Any]:
        return {"ok": True, "config": name, "protocol": "openrlhf"}

    async def answer(body: bytes) -> tuple[int, dict[str, Any]]:
        """The status and JSON content answering a ``POST /get_reward`` body."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or past a limit of the parser's
            return 422, {"detail": [{"loc": ["body"], "msg": f"the body is not valid JSON: {exc}",
                                     "type": "json_invalid"}]}
        query, prompts, labels = _well_formed(data, max_items)
        if query is None:  # something is wrong with it: the checks that say what
            # Before validation, which would describe each of a million wrong items.
            too_long = [{"loc": ["body", key], "type": "too_long",
                         "msg": f"{len(data[key])} items, the limit is {max_items} per request"}
                        for key in RewardRequest.model_fields
                        if isinstance(data, dict) and isinstance(data.get(key), list) and len(data[key]) > max_items]
            if too_long:
                return 422, {"detail": too_long}
            try:
                parsed = RewardRequest.model_validate(data)
            except ValidationError as exc:
                return 422, {"detail": [{"loc": ["body", *err["loc"]], "msg": err["msg"], "type": err["type"]}
                                        for err in exc.errors(include_url=False, include_input=False)]}
            query, prompts, labels = parsed.query, parsed.prompts, parsed.labels
        references, errors = [], []
        for i, label in enumerate(labels if labels is not None else [None] * len(query)):
            try:
                references.append(parse_label(label, i))
            except ValueError as exc:
                errors.append({"loc": ["body", "labels", i], "msg": str(exc), "type": "value_error"})
        if errors:
            return 422, {"detail": errors}
        items = await scored(list(zip(query, prompts, references)))
        return 200, response_content(items, invalid_fill=invalid_fill)

    # The body is read and validated by answer(), not by FastAPI, so that its size limit (enforced by the guard)
    # comes before parsing and every error names its field path; its schema is published by reward_contract.
    # Served by _RewardRoute; the FastAPI route publishes it (and answers when the FastAPI app is used directly).
    async def get_reward(request: Request) -> Any:
        status, content = await answer(await request.body())
        return _response(status, content)

    get_reward.__annotations__["request"] = Request  # this module's annotations are text; fastapi is imported here
    app.post("/get_reward", response_model=RewardResponse, responses=error_responses(keyed=api_key is not None))(
        get_reward)
    return RewardGuard(app, api_key=api_key, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s,
                       handler=_RewardRoute(app, answer))


def _well_formed(data: Any, max_items: int) -> tuple[Any, Any, Any]:
    """``(query, prompts, labels)`` of a body that :class:`RewardRequest` accepts as it is (lists of strings of
    one length, within ``max_items``; labels a list of that length, or null or absent), without the model: the
    one-sample request OpenRLHF sends many of. ``(None, None, None)`` otherwise (the model says what is wrong)."""
    if type(data) is dict:
        query, prompts, labels = data.get("query"), data.get("prompts"), data.get("labels")
        if type(query) is list and type(prompts) is list and len(query) == len(prompts) <= max_items \
                and (labels is None or (type(labels) is list and len(labels) == len(query))) \
                and all(type(text) is str for text in query) and all(type(text) is str for text in prompts):
            return query, prompts, labels
    return None, None, None


def _response(status: int, content: dict[str, Any]) -> Any:
    from fastapi.responses import JSONResponse

    from proofgym.http import SafeJSONResponse

    if status == 200:  # finite numbers only: the plain encoder
        return JSONResponse(content)
    # The messages may quote what the client sent (a label's text): encodable whatever it holds.
    return SafeJSONResponse(status_code=status, content=content)


class _RewardRoute:
    """``POST /get_reward`` answered straight from ASGI, everything else by the FastAPI app (``.app``).

    OpenRLHF sends a request per sample: FastAPI's routing, middleware and dependency machinery cost more
    than the answer itself (about 0.2 ms of a 0.3 ms request), which on hundreds of one-sample requests per
    step is the difference between matching one batched request and being several times slower. The answer is
    two ASGI messages with its JSON bytes (``content-length``, ``content-type: application/json``), as
    Starlette's ``JSONResponse`` would send them, without building one.
    """

    def __init__(self, app: Any, answer: Any) -> None:
        self.app = app
        self.answer = answer

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/get_reward" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away before its body arrived
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        try:
            status, content = await self.answer(b"".join(chunks))
        except Exception as exc:  # noqa: BLE001 - a failure of the reward path is this request's 500, logged
            logger.exception("scoring a reward request failed")
            status, content = 500, {"detail": f"the reward server failed to score this request: "
                                              f"{type(exc).__name__}"}
        # The messages of an error may quote what the client sent (a label's text): encodable whatever it holds.
        body = response_bytes(content) if status == 200 else _safe_bytes(content)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", b"%d" % len(body)), (b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


def _check_batching(batch_window_s: Any, batch_max_items: Any) -> None:
    if isinstance(batch_window_s, bool) or not isinstance(batch_window_s, (int, float)) \
            or not 0 <= batch_window_s <= MAX_BATCH_WINDOW_S:
        raise ValueError(f"batch_window_s must be a number of seconds from 0 (micro-batching off) to "
                         f"{MAX_BATCH_WINDOW_S:g}, got {batch_window_s!r}")
    if isinstance(batch_max_items, bool) or not isinstance(batch_max_items, int) or batch_max_items < 1:
        raise ValueError(f"batch_max_items must be an integer of at least 1, got {batch_max_items!r}")


def connections_within_fd_limit(max_connections: int, *, headroom: int = FD_HEADROOM) -> int:
    """``max_connections``, once this process may open that many descriptors and ``headroom`` more: the soft
    ``RLIMIT_NOFILE`` is raised (as far as the hard limit) when it is lower. Where the hard limit is too low, the
    connections it leaves room for, with a warning (at least 1)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: no limit to read
        return max_connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + headroom
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return max_connections
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    except (ValueError, OSError) as exc:
        logger.warning("could not raise the open-file limit from %d to %d: %s", soft, target, exc)
    if soft >= needed:
        return max_connections
    capped = max(1, soft - headroom)
    logger.warning("max_connections lowered from %d to %d: the open-file limit (RLIMIT_NOFILE %d, hard %s) leaves "
                   "room for no more (raise it with ulimit -n)", max_connections, capped, soft,
                   "unlimited" if hard == resource.RLIM_INFINITY else hard)
    return capped


def serve_reward(source: Any, *, host: str = "127.0.0.1", port: int = 8001, api_key: str | None = None,
                 invalid_fill: float = 0.0, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 log_level: str = "info", header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
                 body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 batch_window_s: float = DEFAULT_BATCH_WINDOW_S,
                 batch_max_items: int = DEFAULT_BATCH_MAX_ITEMS) -> None:
    """Run the reward server with uvicorn until interrupted. Refuses (``ServeError``, a ``ValueError``) to listen on a
    non-loopback address without an API key; OpenRLHF, which sends no headers, gives the key in its URL:
    ``--reward.remote_url http://host:8001/get_reward?key=<key>`` (never logged). Slow clients get 408 (headers
    not complete ``header_timeout_s`` seconds after the connection opened or the previous response, a body not
    arrived ``body_timeout_s`` after its headers) and are disconnected; at most ``max_connections`` connections
    are held (beyond them: 503), the open-file limit raised to hold them (:func:`connections_within_fd_limit`).
    Concurrent requests arriving within ``batch_window_s`` seconds (0: off) are verified as one batch of at most
    ``batch_max_items`` samples (see :func:`create_reward_app`)."""
    import uvicorn

    from proofgym.http import serving_key, uvicorn_limits

    # The key is the caller's (the command reads it with reward_api_key): None is no key, the environment unread.
    serving_key(host, port, api_key, could="score completions", names=REWARD_KEY_ENV_VARS, read_env=False)
    max_connections = connections_within_fd_limit(max_connections)
    limits = uvicorn_limits(header_timeout_s=header_timeout_s, max_connections=max_connections)
    app = create_reward_app(source, api_key=api_key, invalid_fill=invalid_fill, max_body_bytes=max_body_bytes,
                            body_timeout_s=body_timeout_s, batch_window_s=batch_window_s,
                            batch_max_items=batch_max_items)
    # No Server header: one header less to write per response (OpenRLHF sends a request per sample).
    uvicorn.run(app, host=host, port=port, log_level=log_level, server_header=False, **limits)
