"""``BackgroundServer``: an app on a thread of this process, its URL known before it starts, its port freed on close."""

from __future__ import annotations

import socket

import httpx
import pytest
from fastapi import FastAPI

from proofgym.http import BackgroundServer


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    return app


def test_it_serves_on_the_port_it_took_and_frees_it_on_close():
    server = BackgroundServer(_app(), lifespan="off")
    assert server.url == f"http://127.0.0.1:{server.port}" and server.loopback
    with server.start():
        assert server.running
        assert httpx.get(f"{server.url}/ping", timeout=10).json() == {"pong": "yes"}
    server.close()  # idempotent
    assert not server.running
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", server.port))  # the port is free again


def test_an_address_it_cannot_listen_on_is_named():
    with pytest.raises(OSError, match="cannot listen on 192.0.2.1"):
        BackgroundServer(_app(), host="192.0.2.1")


def test_it_takes_the_first_free_port_of_a_range_and_names_a_range_without_one():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first = taken.getsockname()[1]
        ports = range(first, first + 3)
        with BackgroundServer(_app(), lifespan="off", ports=ports) as server:
            assert server.port in ports and server.port != first  # the taken one was skipped
            server.start()
            assert httpx.get(f"{server.url}/ping", timeout=10).json() == {"pong": "yes"}
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1, ports {first}-{first}:"):
            BackgroundServer(_app(), ports=range(first, first + 1))


def test_a_built_server_holds_its_port_before_it_starts():
    """Built, a server has its port (listening, not only bound): a second one built on that port before the first
    starts is refused at once, instead of both binding it (SO_REUSEADDR) and one failing later to start."""

    first = BackgroundServer(FastAPI(), ports=None)
    try:
        with pytest.raises(OSError, match=rf"cannot listen on 127.0.0.1, ports {first.port}-{first.port}"):
            BackgroundServer(FastAPI(), ports=range(first.port, first.port + 1))
    finally:
        first.close()
