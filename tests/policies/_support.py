"""Shared helpers for the policy tests."""

from __future__ import annotations

import asyncio
from typing import Any

from _judge import requires_judge  # noqa: F401  (the one check, re-exported)

from proofgym.policies import OpenAIChatPolicy, PolicyRequest

WRITE_FILE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a Verilog file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "a file name"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
}
COMPILE = {"type": "function", "function": {"name": "compile", "description": "Compile the design.",
                                            "parameters": {"type": "object", "properties": {}}}}
TOOLS = [WRITE_FILE, COMPILE]
MESSAGES = [{"role": "system", "content": "You design hardware."}, {"role": "user", "content": "Make an AND gate."}]


def request(**overrides: Any) -> PolicyRequest:
    fields = {"messages": list(MESSAGES), "tools": TOOLS, "turn": 1, "seed": 0}
    fields.update(overrides)
    return PolicyRequest(**fields)


def act(policy: OpenAIChatPolicy, req: PolicyRequest | None = None):
    """One ``act`` call on a fresh event loop, closing the policy's client after."""

    async def run():
        try:
            return await policy.act(req or request())
        finally:
            await policy.aclose()

    return asyncio.run(run())


def fast_policy(server, path: str = "/v1", **options: Any) -> OpenAIChatPolicy:
    """A policy against the fake server with short backoffs (tests stay fast)."""
    settings = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 5.0}
    settings.update(options)
    return OpenAIChatPolicy("Qwen/Qwen3-0.6B", f"{server.base_url}{path}", **settings)


def png_base64(width: int = 64, height: int = 64) -> str:
    """A valid grey PNG of ``width`` x ``height`` pixels, as base64 (made without an image library)."""
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")
