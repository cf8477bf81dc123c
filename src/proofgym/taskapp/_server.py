"""Running a task app with uvicorn: the loopback rule for keyless apps, and a drain before shutdown
(``create_app(drain_on_signal=True)`` in every worker process)."""

from __future__ import annotations

import json
import os
from typing import Any, Collection, Mapping

import uvicorn
from fastapi import FastAPI

from proofgym.core import redact_url
from proofgym.http import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    ServeError,
    serving_key,
    uvicorn_limits,
)
from proofgym.taskapp._app import DEFAULT_POLICIES, create_app
from proofgym.taskapp._workers import Supervisor, bind_sockets, reuse_port_available
from proofgym.traces import DEFAULT_PATH, TraceStore

# How a multi-worker serve hands its settings to the worker processes (JSON).
_WORKER_SETTINGS = "PROOFGYM_SERVE_WORKER_SETTINGS"


def serve(
    env_name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    env_config: Mapping[str, Any] | None = None,
    traces: str | os.PathLike[str] | None = None,
    api_key: str | None = None,
    max_concurrency: int = 32,
    max_body_bytes: int = 4 << 20,
    max_time_s: float = 900.0,
    grace_s: float = 30.0,
    env_overrides: Collection[str] = (),
    policies: Collection[str] = DEFAULT_POLICIES,
    workers: int = 1,
    log_level: str = "info",
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    judging: Mapping[str, Any] | None = None,
) -> None:
    """Serve environment ``env_name`` on ``host:port`` until interrupted (see :func:`create_app`).

    ``api_key`` defaults to the environment (``ENVIRONMENT_API_KEY``, ...). ``workers`` above 1
    runs that many app processes on the one port, each with its own ``max_concurrency`` and all
    writing to the one trace store; on Linux each listens on its own socket (``SO_REUSEPORT``: the
    kernel spreads connections evenly, see :mod:`proofgym.taskapp._workers`), elsewhere they share
    uvicorn's. On SIGINT / SIGTERM (with several workers, to the supervisor, which sends SIGTERM on
    to them), every app process first drains: it keeps answering, new rollouts get 503 and
    ``/health`` reports draining, running rollouts get ``grace_s`` seconds before they are
    cancelled; then it closes. A second signal to
    an app process is handed to uvicorn at once (a second Ctrl+C forces the exit).

    Slow clients (see :mod:`proofgym.http._timeouts`): a request whose headers are not complete
    ``header_timeout_s`` seconds after its connection opened (or after the previous response on it), or
    whose body has not arrived ``body_timeout_s`` seconds after its headers, gets 408 and its connection
    is closed; each worker holds at most ``max_connections`` connections (a request beyond them: 503).
    ``judging`` turns the judges on (see :func:`create_app`). Raises
    :class:`ServeError` before binding anything when the app would be reachable from other
    machines without a key, or when the environment, its config or the trace store is unusable.
    """
    key = serving_key(host, port, api_key, could="run rollouts")
    if workers < 1:
        raise ServeError(f"workers must be at least 1, got {workers}")
    source = DEFAULT_PATH if traces is None else traces
    # create_app's arguments, the same in every worker process (JSON-native: they are sent to them).
    settings: dict[str, Any] = {
        "env_name": env_name, "env_config": dict(env_config or {}), "api_key": key, "store": str(source),
        "max_concurrency": max_concurrency, "max_body_bytes": max_body_bytes, "max_time_s": max_time_s,
        "grace_s": grace_s, "env_overrides": list(env_overrides), "policies": list(policies),
        "body_timeout_s": body_timeout_s, "drain_on_signal": True,
        "judging": None if judging is None else dict(judging)}
    try:
        app = create_app(**settings)
    except ValueError as exc:
        raise ServeError(str(exc)) from None
    try:
        TraceStore(source).close()  # the app opens it again on start-up; fail here, with the reason, first
    except Exception as exc:  # noqa: BLE001 - any failure to open the store stops the start
        raise ServeError(f"cannot open the trace store {redact_url(str(source))!r}: {exc}") from None
    try:
        limits = uvicorn_limits(header_timeout_s=header_timeout_s, max_connections=max_connections)
    except ValueError as exc:
        raise ServeError(str(exc)) from None
    options = {"host": host, "port": port, "log_level": log_level, "lifespan": "on", "access_log": False,
               "timeout_graceful_shutdown": max(1.0, grace_s), **limits}
    if workers == 1:
        uvicorn.Server(uvicorn.Config(app, **options)).run()
        return
    if not reuse_port_available():  # uvicorn's supervisor: one shared socket
        os.environ[_WORKER_SETTINGS] = json.dumps(settings)
        uvicorn.run("proofgym.taskapp._server:worker_app", factory=True, workers=workers, **options)
        return
    uvicorn.Config(app, **options)  # configures logging here as in the workers
    try:
        sockets = bind_sockets(host, port, workers)
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        status = Supervisor(sockets, settings, {**options, "port": sockets[0].getsockname()[1]}, grace_s).run()
    finally:
        for sock in sockets:
            sock.close()
    if status != 0:
        raise ServeError("a worker could not start its app (see its log above); nothing is served")


def worker_app() -> FastAPI:
    """The app of one worker process of a multi-worker :func:`serve` (its settings come from the parent)."""
    return create_app(**json.loads(os.environ[_WORKER_SETTINGS]))
