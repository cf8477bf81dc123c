"""How a key path inside a document is written in messages: ``runtime.timeout_s``, ``rules[2].when``."""

from __future__ import annotations

import re
from typing import Any, Sequence

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A path longer than this is shown as its first and last parts (a deep one is what the error is about).
_SHOWN_PARTS = 8
_KEY_CHARS = 40


def render_path(path: Sequence[Any]) -> str:
    """``a.b[0].c``; keys that are not plain words are shown as ``repr`` does (control characters escaped)
    and cut to a few dozen characters, so the path always fits on one line."""
    parts = list(path)
    if len(parts) > _SHOWN_PARTS:
        parts = [*parts[:_SHOWN_PARTS // 2], ..., *parts[-(_SHOWN_PARTS // 2):]]
    text = ""
    for part in parts:
        if part is ...:
            text += "…"
        elif isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
        else:
            text += ("." if text and not text.endswith("…") else "") + _key(part)
    return text


def _key(key: Any) -> str:
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return key
    try:
        shown = repr(key)
    except ValueError:  # an integer too long to print
        shown = f"<{type(key).__name__}>"
    if len(shown) > _KEY_CHARS:
        shown = shown[:_KEY_CHARS - 1] + "…"
    return shown
