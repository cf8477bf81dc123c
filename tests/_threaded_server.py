"""An ASGI app under real uvicorn on a free loopback port, in a daemon thread: the test servers (a fake model
server, a task app) share it. Imported as ``from _threaded_server import ThreadedServer`` (pytest puts ``tests/``
on ``sys.path`` for the test packages under it)."""

from __future__ import annotations

from typing import Any

from proofgym.http import BackgroundServer


class ThreadedServer(BackgroundServer):
    """:class:`proofgym.http.BackgroundServer` on loopback, with the tests' time limits, started on ``with``.

    ``start`` waits up to ``start_timeout_s`` for uvicorn to be up and raises ``RuntimeError`` naming ``what``
    otherwise; ``stop`` waits up to ``stop_timeout_s``.
    """

    def __init__(self, app: Any, *, what: str, start_timeout_s: float = 10.0, stop_timeout_s: float = 10.0,
                 **config: Any) -> None:
        super().__init__(app, what=what, name=f"test server: {what}", **config)
        self.start_timeout_s, self.stop_timeout_s = start_timeout_s, stop_timeout_s

    def start(self, timeout_s: float | None = None) -> ThreadedServer:
        super().start(self.start_timeout_s if timeout_s is None else timeout_s)
        return self

    def stop(self) -> None:
        self.close(self.stop_timeout_s)

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
