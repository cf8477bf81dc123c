"""Running the viewer: loopback by default, a key required anywhere else (the task app's rule)."""

from __future__ import annotations

import os
from typing import Callable, Iterable

from proofgym.core import redact_url
from proofgym.http import ServeError, redacted_logs, serving_key, uvicorn_limits
from proofgym.traces import TraceStoreError

DEFAULT_PORT = 8765
_HEADER_TIMEOUT_S = 10.0
_MAX_CONNECTIONS = 64


def view_url(host: str, port: int, api_key: str | None = None) -> str:
    """The address to open (with ``?key=`` when the viewer has a key)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}/" + ("?key=..." if api_key else "")


def serve_view(traces: str | os.PathLike[str], *, run_dirs: Iterable[str | os.PathLike[str]] = (),
               host: str = "127.0.0.1", port: int = DEFAULT_PORT, api_key: str | None = None,
               log_level: str = "warning", announce: Callable[[str], None] | None = None) -> None:
    """Serve the viewer of ``traces`` on ``host:port`` until interrupted.

    ``api_key`` defaults to the environment (``ENVIRONMENT_API_KEY``, ...). Raises ``ServeError`` before binding
    when ``host`` is not a loopback address and there is no key, or when the store cannot be opened; then
    ``announce`` is given the address to open.
    """
    import uvicorn

    from proofgym.view._app import create_view_app

    key = serving_key(host, port, api_key, could="read every trace", server="the viewer")
    try:
        app = create_view_app(traces, run_dirs=run_dirs, api_key=key)
    except TraceStoreError as exc:
        raise ServeError(f"cannot open the trace store {redact_url(str(traces))!r}: {exc}") from None
    limits = uvicorn_limits(header_timeout_s=_HEADER_TIMEOUT_S, max_connections=_MAX_CONNECTIONS)
    if announce is not None:
        announce(view_url(host, port, key))
    with redacted_logs():  # ?key= and any other credential in a request never reach the log
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                                      **limits)).run()
