"""A reward app served by a real uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(app: Any, *, log_level: str = "warning", **config: Any) -> Iterator[tuple[int, Any]]:
    """``(port, server)`` while ``app`` is served on 127.0.0.1 (its lifespan run); shut down gracefully after."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, lifespan="on",
                                           **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the reward server did not start"
            time.sleep(0.02)
        yield port, server
    finally:
        server.should_exit = True
        thread.join(30)
    assert not thread.is_alive(), "the reward server did not shut down"
