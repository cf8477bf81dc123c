"""An ASGI app under real uvicorn on a free loopback port, in a daemon thread: the test servers (a fake model
server, a task app) share it. Imported as ``from _threaded_server import ThreadedServer`` (pytest puts ``tests/``
on ``sys.path`` for the test packages under it)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class ThreadedServer:
    """Serves ``app`` (uvicorn ``config`` on top of ``log_level="warning"``) once started; ``url`` has no path.

    ``start`` waits up to ``start_timeout_s`` for uvicorn to be up and raises ``RuntimeError`` naming ``what``
    otherwise; ``stop`` waits up to ``stop_timeout_s``. Also a context manager.
    """

    def __init__(self, app: Any, *, what: str, start_timeout_s: float = 10.0, stop_timeout_s: float = 10.0,
                 **config: Any) -> None:
        self.what = what
        self.start_timeout_s, self.stop_timeout_s = start_timeout_s, stop_timeout_s
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, **{"log_level": "warning", **config}))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    def start(self) -> ThreadedServer:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"{self.what} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=self.stop_timeout_s)
        self._socket.close()

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
