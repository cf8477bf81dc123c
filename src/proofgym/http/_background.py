"""An ASGI app served by uvicorn on a thread of this process: the RL trainer's policy, a task app inside a Ray actor."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from proofgym.http._auth import is_loopback


class BackgroundServer:
    """``app`` on ``host`` and a free port (the first free one of ``ports`` when given), served by uvicorn on a
    daemon thread until :meth:`close`.

    The socket is bound when the server is built, so :attr:`url` is known (and the port taken) before
    :meth:`start`. ``config``: uvicorn's settings on top of ``log_level="warning"`` and no access log (for example
    ``lifespan="off"`` for an app without start-up or shut-down work); ``what`` names the server in errors.
    """

    def __init__(self, app: Any, *, host: str = "127.0.0.1", name: str = "proofgym-server", what: str | None = None,
                 ports: range | None = None, **config: Any) -> None:
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = _bind(family, host, ports)
        self.host, self.port = host, self._socket.getsockname()[1]
        self.url = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{self.port}"
        self.loopback = is_loopback(host)
        self.what = what or f"the server on {self.url}"
        self._server = uvicorn.Server(uvicorn.Config(app, **{"log_level": "warning", "access_log": False, **config}))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True,
                                        name=name)

    def start(self, timeout_s: float = 30.0) -> BackgroundServer:
        """Start serving; returns once uvicorn accepts connections (``RuntimeError`` if it did not in time)."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"{self.what} did not start")
            time.sleep(0.02)
        return self

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop serving (running requests get uvicorn's shut-down) and free the port; idempotent."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=timeout_s)
        self._socket.close()


def _bind(family: socket.AddressFamily, host: str, ports: range | None) -> socket.socket:
    """A socket bound on ``host`` to the first free port of ``ports`` (any free port when ``None``); ``OSError``
    naming the host (and the ports) when none is free."""
    last: OSError | None = None
    for port in ports if ports is not None else (0,):
        sock = socket.socket(family)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            # Listening claims the port now: a socket only bound (SO_REUSEADDR) lets another process bind the same
            # port until one of them listens, and the loser's start then fails.
            sock.listen(2048)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    where = f"{host}" if ports is None else f"{host}, ports {ports.start}-{ports.stop - 1}"
    raise OSError(f"cannot listen on {where}: {last or 'no port in the range'}")
