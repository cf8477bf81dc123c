"""RequestGuard words its refusals through a Refusals object: the task app's by default (``{"detail": ...}``), a
server's own shape otherwise (serve-model answers in OpenAI's); the checks, their order and the statuses' headers
(``www-authenticate`` on 401, ``connection: close`` on 408 and 413) are the guard's whatever the wording."""

from __future__ import annotations

import asyncio
import json

from proofgym.http import Refusal, Refusals, RequestGuard


class Shouting(Refusals):
    def presented(self, headers):
        return headers.get("x-token")

    def unauthorized(self, presented):
        return Refusal(403, {"error": "KEY" if presented is None else "WRONG KEY"})

    def bad_length(self, declared):
        return None if not declared.strip() else Refusal(400, {"error": "LENGTH"})

    def too_large(self, limit, *, size=None, digits=None, streamed=False):
        return Refusal(413, {"error": f"TOO LARGE {limit} {size} {digits} {streamed}"})

    def timed_out(self, seconds):
        return Refusal(408, {"error": f"SLOW {seconds:g}"})

    def too_deep(self, problem):
        return Refusal(400, {"error": f"DEEP {problem.kind}"})


async def _app(scope, receive, send):
    message = await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": message.get("body", b"")})


def _call(guard, headers=(), chunks=(b"{}",), trickle=False):
    messages = [{"type": "http.request", "body": chunk, "more_body": trickle or i < len(chunks) - 1}
                for i, chunk in enumerate(chunks)]
    sent = []

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(10)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "path": "/x", "headers": [(k.encode(), v.encode()) for k, v in headers]}
    asyncio.run(asyncio.wait_for(guard(scope, receive, send), 5))
    start = sent[0]
    return start["status"], dict((k.decode(), v.decode()) for k, v in start["headers"]), sent[1]["body"]


def test_a_servers_own_refusals_word_every_check():
    guard = RequestGuard(_app, api_key="k", max_body_bytes=10, body_timeout_s=0.2, refusals=Shouting())
    token = ("x-token", "k")
    assert _call(guard)[0::2] == (403, b'{"error":"KEY"}')
    assert _call(guard, [("x-token", "no")])[0::2] == (403, b'{"error":"WRONG KEY"}')
    assert _call(guard, [("x-api-key", "k")])[0] == 403  # this server reads its key from x-token only
    assert _call(guard, [token, ("content-length", "x")])[0::2] == (400, b'{"error":"LENGTH"}')
    assert _call(guard, [token, ("content-length", " ")]) == (200, {}, b"{}")  # a blank length read as none
    status, headers, body = _call(guard, [token, ("content-length", "11")])
    assert (status, headers["connection"], json.loads(body)) == (413, "close", {"error": "TOO LARGE 10 11 None False"})
    assert json.loads(_call(guard, [token, ("content-length", "9" * 30)])[2]) == {"error": "TOO LARGE 10 None 30 False"}
    assert json.loads(_call(guard, [token], [b"123456", b"789012"])[2]) == {"error": "TOO LARGE 10 12 None True"}
    status, headers, body = _call(guard, [token], [b"{"], trickle=True)
    assert (status, headers["connection"], body) == (408, "close", b'{"error":"SLOW 0.2"}')
    deep = RequestGuard(_app, api_key=None, max_body_bytes=1000, refusals=Shouting())
    assert _call(deep, chunks=[b"[" * 70 + b"]" * 70])[0::2] == (400, b'{"error":"DEEP json_too_deep"}')


def test_the_default_refusals_are_the_task_apps():
    guard = RequestGuard(_app, api_key="k", max_body_bytes=10)
    status, headers, body = _call(guard, [("x-api-keys", "a, b")])
    assert (status, headers["www-authenticate"]) == (401, "Bearer")
    assert json.loads(body)["detail"].startswith("invalid API key: send the app's key as an X-API-Key header")
    assert _call(guard, [("x-api-keys", "a, k"), ("content-length", " ")])[0] == 400  # blank: not a byte count
