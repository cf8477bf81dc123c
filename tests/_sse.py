"""Reading a streamed chat completion (server-sent events) the way the tests check it: the raw text of the reply,
its events with the framing checked, and each choice as its chunks build it. Imported as ``from _sse import ...``
(pytest puts ``tests/`` on ``sys.path`` for the test packages under it)."""

from __future__ import annotations

import json


def stream_raw(client, path="/v1/chat/completions", **body):
    """The raw text of a streamed reply to ``body`` (``stream: true`` added), checking its status and media type."""
    with client.stream("POST", path, json={**body, "stream": True}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return response.read().decode()


def events(raw):
    """The JSON of each ``data:`` event, checking the framing: ``data: <json>`` events apart by one blank line, the
    last one ``data: [DONE]``."""
    assert raw.endswith("\n\ndata: [DONE]\n\n"), raw[-200:]
    parts = raw.split("\n\n")
    assert parts[-1] == ""
    data = []
    for part in parts[:-1]:
        assert part.startswith("data: ") and "\n" not in part, part
        data.append(part[len("data: "):])
    assert data[-1] == "[DONE]" and "[DONE]" not in data[:-1]
    return [json.loads(item) for item in data[:-1]]


def assembled(chunks):
    """Each choice as the chunks build it: role, content, token ids, logprobs, finish reason, tool calls."""
    choices = {}
    for chunk in chunks:
        for piece in chunk["choices"]:
            choice = choices.setdefault(piece["index"], {"role": None, "content": "", "token_ids": [],
                                                         "logprobs": None, "finish_reason": None, "tool_calls": []})
            assert choice["finish_reason"] is None, "a chunk came after the choice's finish_reason"
            delta = piece["delta"]
            if "role" in delta:
                assert choice["role"] is None
                choice["role"] = delta["role"]
            choice["content"] += delta.get("content") or ""
            choice["tool_calls"] += delta.get("tool_calls") or []
            choice["token_ids"] += piece.get("token_ids", [])
            if piece["logprobs"] is not None:
                choice["logprobs"] = (choice["logprobs"] or []) + piece["logprobs"]["content"]
            choice["finish_reason"] = piece["finish_reason"]
    return [choices[index] for index in sorted(choices)]
