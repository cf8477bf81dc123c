"""The one OpenAI-compatible chat-completions client: what the policies and the judges send to a model server.

One POST (:meth:`ChatClient.send`) streams the answer up to :data:`MAX_RESPONSE_BYTES`, within ``timeout_s`` of
wall-clock time, and comes back as a :class:`ChatAttempt`: the response's JSON object, or why there is none as an
:class:`~proofgym.core.ErrorKind` with a message that quotes no credential. It never raises for anything the server
or the network does. :meth:`ChatClient.complete` runs the one retry policy (:class:`RetryPolicy`) over such attempts.

Why not the ``openai`` SDK's ``AsyncOpenAI``: it reads a whole response body with no bound on its size, its
retries happen inside one call (so a trace cannot record each attempt, nor a judge's limiter pause its endpoint on a
429), and it turns the body into its own pydantic types (a server's extra fields, vLLM's ``logprobs`` shapes, are
what the policies read). httpx is what it runs on anyway, and is a dependency already.

httpx is imported on first use, so importing this module (and the judges and policies that use it) loads none.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from proofgym.core import (
    ErrorKind,
    error_detail,
    excerpt,
    redact_secrets,
    redact_text,
    redact_url,
    retry_after_seconds,
)

if TYPE_CHECKING:
    import ssl

    import httpx

#: A response body is read up to this size; a larger one is an error (``malformed``), not a memory spike. One cap
#: for every chat call: the largest legitimate answer is a policy's with per-token ``logprobs`` (top-20 alternatives
#: over a few thousand tokens is several MiB), and a judge's answer is bounded by its ``max_tokens`` well below it;
#: what the cap guards against is a server that never stops sending. ``ChatClient(max_response_bytes=...)`` lowers it.
MAX_RESPONSE_BYTES = 16 << 20
#: The longest ``Retry-After`` honoured.
MAX_RETRY_AFTER_S = 60.0
# Keep-alive connections kept open while idle (beyond them, a connection is closed when its request ends).
_MAX_IDLE_CONNECTIONS = 100


def chat_completions_url(url: str, *, name: str = "url") -> str:
    """The chat completions endpoint of ``url``, keeping its query string.

    ``http://host:8000/v1``, ``http://host:8000/v1/`` and ``http://host:8000/v1/chat/completions`` all give
    ``http://host:8000/v1/chat/completions``; ``...?cid=trace_abc`` keeps ``?cid=trace_abc`` (the RL trainer
    correlates traces by it). Anything but an http(s) URL with a host is a ``ValueError`` naming the setting
    (``name``: ``inference_url``, ``base_url``...) and quoting the URL without its credentials.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"{name} must be an http(s) URL, got {redact_secrets(url)!r}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{name} must be an http(s) URL with a host, got {redact_url(url)!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before another attempt: a transient failure (429, 408, 5xx, a timeout, a lost or
    refused connection: :attr:`ChatAttempt.retryable`) is tried again up to ``max_retries`` times, after its
    ``Retry-After`` (at most ``max_retry_after_s``) or else a jittered exponential backoff (half to all of
    ``min(backoff_max_s, backoff_base_s * 2**attempt)``); anything else is final at once."""

    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    max_retry_after_s: float = MAX_RETRY_AFTER_S

    def delay(self, attempt: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait after the failed attempt ``attempt`` (0-based)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s)
        ceiling: float = min(self.backoff_max_s, self.backoff_base_s * 2 ** attempt)
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


#: One attempt, never retried (a caller that retries at another level: the judges' runtime).
NO_RETRIES = RetryPolicy(max_retries=0)


@dataclass(frozen=True)
class ChatAttempt:
    """One POST's end: the response's JSON object (``payload``), or ``error`` with its ``kind``.

    ``status`` is the HTTP status (``None`` when no response came), ``body_excerpt`` an excerpt of a body that was
    not used, ``retry_after_s`` the server's ``Retry-After`` of a 429 / 5xx, ``latency_s`` the attempt's wall-clock
    time. ``error`` and ``body_excerpt`` quote no credential (a server may echo the request; an HTTP client's error,
    the URL)."""

    status: int | None
    payload: dict[str, Any] | None = None
    error: str | None = None
    kind: ErrorKind | None = None
    retry_after_s: float | None = None
    body_excerpt: str = ""
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def retryable(self) -> bool:
        """Whether another attempt may succeed (a timeout, an outage, a rate limit)."""
        return self.kind is not None and self.kind.transient


@dataclass(frozen=True)
class ChatAnswer:
    """The end of :meth:`ChatClient.complete`: its ``last`` attempt, with ``error`` saying how many were made."""

    last: ChatAttempt
    attempts: int
    error: str | None = field(default=None)

    @property
    def payload(self) -> dict[str, Any] | None:
        return self.last.payload


class ChatClient:
    """POSTs chat-completion bodies to ``url`` (an endpoint, see :func:`chat_completions_url`).

    ``api_key`` is sent as ``Authorization: Bearer``. ``timeout_s`` bounds each attempt's whole wall-clock time
    (connecting, waiting and reading). ``client`` is an ``httpx.AsyncClient`` to use and leave open; otherwise the
    client makes its own per event loop (a client's connections belong to the loop that opened them), over
    ``transport`` when given (tests), with no cap on connections (requests in flight each hold one; the server does
    the queueing). One instance serves many concurrent requests.

    The clients it makes are *lanes*: each ``httpx.AsyncClient`` holds one keep-alive connection and carries one
    request at a time; a request takes an idle lane (the one used last, so its connection is warm) or opens a new
    one. One client with a pool of N connections costs more per request the more are in flight, since httpcore's
    pool walks (and probes the socket of) every connection at each request and response: at 16 in flight that was
    1.5-2.2 ms of CPU a request on the event loop, against 0.9 ms over lanes (benchmarks/judge_throughput.py).
    """

    def __init__(self, url: str, *, api_key: str | None = None, timeout_s: float = 60.0,
                 retry: RetryPolicy | None = None, max_response_bytes: int = MAX_RESPONSE_BYTES,
                 client: httpx.AsyncClient | None = None, transport: Any = None) -> None:
        self.url = url
        self.timeout_s = float(timeout_s)
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_response_bytes = max_response_bytes
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._transport = transport
        self._client = client
        self._owns_client = client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None  # the loop of the clients made (below)
        self._lanes: list[httpx.AsyncClient] = []  # every client made on that loop
        self._idle: list[httpx.AsyncClient] = []  # those carrying no request, the one used last at the end
        self._target: httpx.URL | None = None  # self.url parsed once (httpx parses a str at every request)
        self._rng = random.Random()

    async def complete(self, body: dict[str, Any],
                       on_attempt: Callable[[ChatAttempt], None] | None = None) -> ChatAnswer:
        """POST ``body`` under :attr:`retry`, waiting between attempts; each attempt is handed to ``on_attempt``
        (to record it). A 400 / 422 is final at once, so a caller can read what the server refused."""
        for attempt in range(self.retry.max_retries + 1):
            result = await self.send(body)
            if on_attempt is not None:
                on_attempt(result)
            if result.ok:
                return ChatAnswer(result, attempt + 1)
            if not result.retryable or attempt == self.retry.max_retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                return ChatAnswer(result, attempt + 1, error=f"{result.error}{tries}")
            await asyncio.sleep(self.retry.delay(attempt, result.retry_after_s, self._rng))
        raise AssertionError("unreachable: the last attempt returns")

    async def send(self, body: dict[str, Any]) -> ChatAttempt:
        """One POST of ``body``; never raises for what the server or the network does."""
        started = time.perf_counter()
        attempt = await self._send(body)
        attempt = replace(attempt, latency_s=time.perf_counter() - started)
        if attempt.error is None:
            return attempt
        return replace(attempt, error=redact_text(attempt.error), body_excerpt=redact_text(attempt.body_excerpt))

    async def _send(self, body: dict[str, Any]) -> ChatAttempt:
        import httpx

        client = self._take_client()
        if self._target is None:
            self._target = httpx.URL(self.url)
        headers = None if self._owns_client else self._headers  # the clients made here carry them already
        try:
            async with asyncio.timeout(self.timeout_s):
                async with client.stream("POST", self._target, json=body, headers=headers,
                                         timeout=self.timeout_s) as response:
                    raw = bytearray()
                    async for chunk in response.aiter_bytes():
                        raw += chunk
                        if len(raw) > self.max_response_bytes:
                            return ChatAttempt(response.status_code, kind=ErrorKind.MALFORMED,
                                               error=f"the response body is larger than {self.max_response_bytes} "
                                                     "bytes")
        except (TimeoutError, httpx.TimeoutException):
            return ChatAttempt(None, kind=ErrorKind.TIMEOUT, error=f"no response within {self.timeout_s:g} s")
        except (httpx.TransportError, OSError) as exc:
            return ChatAttempt(None, kind=ErrorKind.OUTAGE, error=_describe(exc) or "connection failed")
        except httpx.HTTPError as exc:
            return ChatAttempt(None, kind=ErrorKind.CRASH, error=_describe(exc))
        finally:
            await self._give_back(client)
        return _read(response.status_code, bytes(raw), response.headers.get("retry-after"))

    def _take_client(self) -> httpx.AsyncClient:
        """The HTTP client for one request: the one passed in, the one over the transport passed in, or a lane."""
        if not self._owns_client:
            assert self._client is not None
            return self._client
        loop = asyncio.get_running_loop()
        if self._client_loop is not loop:  # the clients of another loop are dropped with it
            self._lanes, self._idle, self._client_loop = [], [], loop
        if self._idle:
            return self._idle.pop()
        if self._transport is not None and self._lanes:  # one client over a transport passed in: its pool rules
            return self._lanes[0]
        import httpx

        limits = httpx.Limits(max_connections=None if self._transport is not None else 1,
                              max_keepalive_connections=_MAX_IDLE_CONNECTIONS)
        client = httpx.AsyncClient(transport=self._transport, timeout=self.timeout_s, limits=limits,
                                   headers=self._headers, verify=default_tls_context())
        self._lanes.append(client)
        return client

    async def _give_back(self, client: httpx.AsyncClient) -> None:
        """``client``'s request is over: a lane becomes idle again (one past the idle cap is closed)."""
        if self._transport is not None or client not in self._lanes:  # not a lane, or of a loop since dropped
            return
        if len(self._idle) < _MAX_IDLE_CONNECTIONS:
            self._idle.append(client)
            return
        self._lanes.remove(client)
        await client.aclose()

    def _drop_clients(self) -> tuple[list[httpx.AsyncClient], asyncio.AbstractEventLoop | None]:
        clients, loop = self._lanes, self._client_loop
        self._lanes, self._idle, self._client_loop = [], [], None
        return (clients if self._owns_client else []), loop

    async def aclose(self) -> None:
        """Close the HTTP clients this client made, when they belong to the running loop (a client passed in stays
        open; those of a loop that is gone went with it)."""
        clients, loop = self._drop_clients()
        if loop is asyncio.get_running_loop():
            await _close_all(clients)

    def close(self) -> None:
        """Close the HTTP clients this client made on the loop that made them, from any other thread (a loop that
        runs elsewhere, as the judges' runtime's does); clients that will not close are dropped with their loop."""
        clients, loop = self._drop_clients()
        if not clients or loop is None or loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(_close_all(clients), loop).result(timeout=5.0)
        except Exception:  # noqa: BLE001 - dropped with its loop
            pass

    def __repr__(self) -> str:
        return f"ChatClient(url={redact_url(self.url)!r})"


@functools.cache
def default_tls_context() -> ssl.SSLContext:
    """httpx's default certificate-verifying TLS context (certifi's CAs, or ``$SSL_CERT_FILE`` / ``$SSL_CERT_DIR``),
    made once per process and shared by every client. Making one reads the CA bundle: 50-130 ms of CPU that each
    new client spent on its event loop, before any of the calls waiting on that loop went out (a judge's first step
    paid it with all its calls in flight). A change to those variables after the first client is not seen."""
    import httpx

    return httpx.create_ssl_context()


def _read(status: int, raw: bytes, retry_after: str | None) -> ChatAttempt:
    """A whole response as an attempt: a 2xx JSON object, or the kind of failure."""
    text = raw.decode("utf-8", errors="replace")
    if 200 <= status < 300:
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):
            payload = None
        if not isinstance(payload, dict):
            return ChatAttempt(status, kind=ErrorKind.MALFORMED, body_excerpt=excerpt(text),
                               error=f"HTTP {status} with a body that is not a JSON object: {excerpt(text)!r}")
        return ChatAttempt(status, payload=payload)
    kind = ErrorKind.RATE_LIMITED if status == 429 else ErrorKind.TIMEOUT if status == 408 else \
        ErrorKind.OUTAGE if status >= 500 else ErrorKind.CRASH
    return ChatAttempt(status, kind=kind, error=f"HTTP {status}: {error_detail(text)}", body_excerpt=excerpt(text),
                       retry_after_s=retry_after_seconds(retry_after) if kind.transient else None)


async def _close_all(clients: list[httpx.AsyncClient]) -> None:
    await asyncio.gather(*(client.aclose() for client in clients), return_exceptions=True)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
