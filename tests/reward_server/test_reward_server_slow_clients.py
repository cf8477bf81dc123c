"""``proofgym serve-reward`` against slow clients over real sockets: its header and body timeouts and its
connection cap take effect (the mechanisms themselves are tested in tests/http/test_timeouts.py)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

KEY = "s3cret-key"
TIMEOUT_S = 0.5
ROOT = Path(__file__).resolve().parents[2]


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_serve_reward_cuts_off_slow_clients_and_caps_its_connections():
    environ = {**os.environ, "PROOFGYM_API_KEY": KEY}
    command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve-reward", "--config",
               str(ROOT / "configs" / "run" / "grant_eligibility.yaml"), "--port", "0",
               "--header-timeout-s", str(TIMEOUT_S), "--body-timeout-s", str(TIMEOUT_S), "--max-connections", "1"]
    process = subprocess.Popen(command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        log = []
        for line in process.stdout:
            log.append(line)
            found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
                break
        else:
            raise AssertionError("serve-reward did not start:\n" + "".join(log))

        def connect():
            return socket.create_connection(("127.0.0.1", port), timeout=5)

        with connect() as sock:  # headers trickled, then nothing
            start = time.monotonic()
            sock.sendall(b"POST /get_reward HTTP/1.1\r\nHost: x\r\n")
            assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
            assert time.monotonic() - start < TIMEOUT_S + 2
        with connect() as sock:  # a Content-Length longer than the body sent
            sock.sendall(b"POST /get_reward HTTP/1.1\r\nHost: x\r\nX-API-Key: " + KEY.encode() +
                         b"\r\nContent-Length: 100\r\n\r\n{\"query\": ")
            assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")
        with connect() as idle, connect() as sock:  # one connection held: the next one is refused
            time.sleep(0.1)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _read_until_closed(sock).startswith(b"HTTP/1.1 503 ")
            del idle
        reply = httpx.post(f"http://127.0.0.1:{port}/get_reward", json={"query": ["p a"], "prompts": ["p"]},
                           headers={"X-API-Key": KEY}, timeout=30)
        assert reply.status_code == 200 and len(reply.json()["rewards"]) == 1
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()
