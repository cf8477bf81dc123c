"""Slow clients: how long a server waits for a request's headers and body, and how many connections it holds.

uvicorn bounds only the idle time between two requests of a connection (``timeout_keep_alive``): a client
that opens a connection and trickles its headers, or declares a longer ``Content-Length`` than it sends,
holds the connection (and a worker's file descriptor) for as long as it likes. Here:

- :func:`http_protocol` is uvicorn's HTTP protocol (httptools when installed, else h11) with a header
  timeout: the request line and headers must be complete ``header_timeout_s`` seconds after the connection
  opens, or after the previous response on it; otherwise the server closes the connection, answering 408
  first when part of a request had arrived.
- the body is bounded where it is read, by :class:`~proofgym.http.RequestGuard` (``body_timeout_s``): it must
  have arrived ``body_timeout_s`` seconds after the headers, or the server answers 408 and closes the connection.
- ``limit_concurrency`` (:func:`uvicorn_limits`) caps the connections of one worker: a request on a
  connection beyond the cap gets uvicorn's 503 (``text/plain``) and the connection is closed.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from typing import Any, Callable

logger = logging.getLogger("proofgym.http")

#: Headers are a few hundred bytes that any client sends at once: 10 s is generous even over a slow link.
DEFAULT_HEADER_TIMEOUT_S = 10.0
#: The task app's bodies are at most 4 MiB (``--max-body-bytes``): 30 s is 140 KB/s, far below any trainer's link.
DEFAULT_BODY_TIMEOUT_S = 30.0
#: A worker's connections: 8x the default 32 rollouts at once (room for waiting rollouts and idle keep-alive
#: connections), well below the usual limit of 1024 open files per process.
DEFAULT_MAX_CONNECTIONS = 256


def _body(detail: str) -> bytes:
    return json.dumps({"detail": detail}).encode()


class _HeaderTimeout:
    """The header timer of a uvicorn HTTP protocol (mixed in before it): armed while the connection waits
    for a request's headers, disarmed when they are complete (by the subclass), re-armed after a response."""

    def __init__(self, *args: Any, header_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s = header_timeout_s
        self._header_timer: asyncio.TimerHandle | None = None
        self._started = False  # bytes of the awaited request have arrived

    def data_received(self, data: bytes) -> None:
        self._started = True
        super().data_received(data)  # type: ignore[misc]

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        # Idle again, unless a pipelined request (its headers already read) has started or is queued.
        cycle = self.cycle  # type: ignore[attr-defined]
        if (cycle is None or cycle.response_complete) and not self.transport.is_closing():  # type: ignore[attr-defined]
            self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._started = False
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_timed_out)  # type: ignore

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            return
        logger.info("closed a connection whose request headers did not arrive within %.3g s", self.header_timeout_s)
        if self._started:  # a request was begun: say why it is dropped (an idle connection is just closed)
            body = _body(f"the request headers did not arrive within {self.header_timeout_s:g} s")
            transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        transport.close()


@functools.lru_cache(maxsize=None)
def _protocols() -> tuple[type, type]:
    """uvicorn's protocol classes with the header timeout, loaded on first use (httptools is optional)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class H11WithHeaderTimeout(_HeaderTimeout, H11Protocol):
        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # h11 gave a Request: its headers are complete
                self._disarm_header_timer()

    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is in the serve extra
        return H11WithHeaderTimeout, H11WithHeaderTimeout

    class HttpToolsWithHeaderTimeout(_HeaderTimeout, HttpToolsProtocol):
        def on_headers_complete(self) -> None:
            self._disarm_header_timer()
            super().on_headers_complete()

    return HttpToolsWithHeaderTimeout, H11WithHeaderTimeout


def _protocol(kind: str, **kwargs: Any) -> Any:
    httptools_protocol, h11_protocol = _protocols()
    return (h11_protocol if kind == "h11" else httptools_protocol)(**kwargs)


def http_protocol(header_timeout_s: float, *, kind: str = "auto") -> Callable[..., asyncio.Protocol]:
    """``uvicorn.Config(http=...)``: uvicorn's HTTP protocol (``kind``: ``auto``, ``httptools`` or ``h11``) with
    a header timeout of ``header_timeout_s`` seconds. Picklable, so it travels to spawned worker processes."""
    if not header_timeout_s > 0:
        raise ValueError(f"header_timeout_s must be > 0, got {header_timeout_s}")
    if kind not in ("auto", "httptools", "h11"):
        raise ValueError(f"kind must be auto, httptools or h11, got {kind!r}")
    return functools.partial(_protocol, kind, header_timeout_s=header_timeout_s)


def uvicorn_limits(*, header_timeout_s: float, max_connections: int) -> dict[str, Any]:
    """The ``uvicorn.Config`` options for the header timeout and for at most ``max_connections`` connections."""
    if max_connections < 1:
        raise ValueError(f"max_connections must be at least 1, got {max_connections}")
    # uvicorn answers 503 once its connections (the new one included) reach limit_concurrency.
    return {"http": http_protocol(header_timeout_s), "limit_concurrency": max_connections + 1}
