"""What an OpenAI-compatible server answered, read defensively: token counts, ``Retry-After`` and the message of an
error body. One reading for every client of such a server (the policies, the LLM judges)."""

from __future__ import annotations

import json
import math
import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping

#: Characters kept of an error message or a body quoted in an error.
EXCERPT_CHARS = 500


def usage_counts(payload: Any) -> tuple[int | None, int | None]:
    """``(prompt_tokens, completion_tokens)`` of a chat-completion body; each ``None`` when absent or not a
    plausible count (a non-negative integer below 2**40)."""
    usage = payload.get("usage") if isinstance(payload, Mapping) else None
    if not isinstance(usage, Mapping):
        return None, None
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 40 else None


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait per ``Retry-After`` (delay-seconds or an HTTP date); ``None`` if absent or unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def error_detail(text: str) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message": ...}}`` or vLLM's ``{"message": ...}``),
    else an excerpt of the body."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return excerpt(text) or "(empty body)"
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return excerpt(error["message"])
        for key in ("message", "detail", "error"):
            if isinstance(body.get(key), str):
                return excerpt(body[key])
    return excerpt(text)


def excerpt(text: str) -> str:
    """``text`` on one line, cut to :data:`EXCERPT_CHARS`."""
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 3] + "..."
