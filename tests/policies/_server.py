"""A real OpenAI-compatible HTTP server for the policy tests: FastAPI under uvicorn, on loopback, in a thread.

Each test scripts the replies (recorded OpenAI / vLLM payloads from ``payloads/``, a status, headers, a
delay, or a raw body) and reads back every request the server received.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _threaded_server import ThreadedServer
from fastapi import FastAPI, Request
from fastapi.responses import Response

PAYLOADS = Path(__file__).with_name("payloads")


def payload(name: str) -> dict[str, Any]:
    """A recorded response payload (a fresh copy)."""
    return copy.deepcopy(json.loads((PAYLOADS / f"{name}.json").read_text()))


def with_content(name: str, content: str) -> dict[str, Any]:
    """A recorded text-reply payload with its message content replaced."""
    body = payload(name)
    body["choices"][0]["message"]["content"] = content
    return body


@dataclass
class Reply:
    """One scripted reply: a JSON body (or a raw ``text`` body), a status, headers, a delay before answering."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    text: str | None = None


@dataclass
class Received:
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    at: float


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        app = FastAPI()

        @app.post("/{path:path}")
        async def chat(path: str, request: Request) -> Response:
            raw = await request.body()
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            with self._lock:
                self.requests.append(Received("/" + path, request.url.query, dict(request.headers), body,
                                              time.monotonic()))
                reply = self.replies.pop(0) if self.replies else Reply({"error": {"message": "no scripted reply"}}, 500)
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            content = reply.text if reply.text is not None else json.dumps(reply.body)
            return Response(content=content, status_code=reply.status, headers=reply.headers,
                            media_type="application/json")

        self._served = ThreadedServer(app, what="the fake OpenAI server", lifespan="off", timeout_graceful_shutdown=1,
                                      stop_timeout_s=5)
        self.port = self._served.port
        self.base_url = self._served.url

    def start(self) -> FakeOpenAIServer:
        self._served.start()
        return self

    def stop(self) -> None:
        self._served.stop()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies = list(replies)
            self.requests = []
