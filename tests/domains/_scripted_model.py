"""A scripted OpenAI-compatible model server: a real HTTP server on loopback whose ``/v1/chat/completions`` answers
with the next scripted text (the last one again once the script runs out) and records every request body."""

from __future__ import annotations

import threading
from typing import Any

from _threaded_server import ThreadedServer
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class ScriptedModel:
    """``answers``: the message texts to send, in order. ``requests``: the bodies received. ``url``: the server's
    base URL (``.../v1``) while it runs (``with ScriptedModel([...]) as model:``)."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> JSONResponse:
            body = await request.json()
            with self._lock:
                self.requests.append(body)
                text = self.answers[min(len(self.requests), len(self.answers)) - 1]
            return JSONResponse({
                "id": f"scripted-{len(self.requests)}", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })

        self._server = ThreadedServer(app, what="a scripted model server", lifespan="off",
                                      timeout_graceful_shutdown=1)
        self.url = f"{self._server.url}/v1"

    def __enter__(self) -> ScriptedModel:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
