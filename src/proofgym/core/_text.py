"""Text and data from outside (a model, a client, a file) as proofgym stores, hashes, encodes and returns it.

One rule, used wherever untrusted text meets UTF-8 (hashing, JSON, SQLite / Postgres, subprocess arguments):

- a lone surrogate (``"\\ud800"``: a Python ``str`` can hold it, UTF-8 cannot) becomes U+FFFD;
  a high + low pair written as two code units (``"\\ud83d\\ude00"``) becomes the one character it spells;
- NUL (``"\\x00"``) becomes U+FFFD: Postgres text cannot hold it, and C strings (subprocess arguments) end at it;
- every other character is kept as it is, control characters included (JSON escapes them; a model's
  tabs and escape sequences are part of what it wrote, and the reward must judge exactly that).

So the same completion always gets the same text, the same cache key and the same stored form, and no
encoder downstream can raise on it. :func:`bounded_json` applies the rule to data (a tool call's
arguments, an ``info`` dict) and also bounds its depth and size, so any value can be stored and sent.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from proofgym.core._limits import MAX_DEPTH, digits_past_limit, has_digit_run, nests_deeper_than

REPLACEMENT = "\ufffd"
#: Characters that act on the display instead of showing: the bidirectional controls (embeddings, overrides,
#: isolates, marks: U+202E would reorder a reason or a reward around it), then the C0 and C1 control characters
#: other than tab, line feed and carriage return (a terminal runs ESC sequences).
CONTROL_CHARACTERS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                                "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def model_text(text: str) -> str:
    """``text`` with lone surrogates and NUL replaced by U+FFFD (see the module docstring); ``text`` itself
    when it has neither, which is the common case and costs one scan."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # UTF-16 round trip: a split pair joins into its character, a lone half becomes U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def show_controls(text: str) -> str:
    """``text`` with each of :data:`CONTROL_CHARACTERS` written as a visible ``<U+XXXX>`` marker: how model text
    is shown to a person (a terminal, a page), so that it cannot reorder or hide what stands around it."""
    return CONTROL_CHARACTERS.sub(lambda found: f"<U+{ord(found.group()):04X}>", text)


def text_bytes(text: str) -> bytes:
    """The UTF-8 bytes proofgym hashes for ``text``: those of :func:`model_text`, so hashing never raises."""
    return model_text(text).encode("utf-8")


def bounded_json(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` as JSON-native data that every encoder accepts: strings (keys included) through
    :func:`model_text`; non-finite floats as their names (``"nan"``, ``"inf"``); integers beyond
    :data:`MAX_INT_DIGITS` digits, containers nested deeper than ``max_depth`` and anything that is not
    JSON data (objects, bytes) as a short string saying what was there. Returns ``value`` itself (no copy)
    when it is already clean, which is decided by C code (the ``json`` encoder and a few string scans) in
    the common case; only data that needs cleaning is walked in Python, and then tuples become lists and
    mapping keys strings.
    """
    if _already_clean(value, max_depth):
        return value
    cleaned, _ = _clean(value, max_depth)
    return cleaned


_FAST_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _already_clean(value: Any, max_depth: int) -> bool:
    """Whether ``value`` passes as it is: the strict encoder takes it (JSON data, finite numbers, under
    Python's recursion limit), its text is valid UTF-8 without NUL, no integer in it is too long, and it
    nests at most ``max_depth`` levels (the tests of :mod:`proofgym.core._limits`, on the encoded bytes)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return False  # a scalar is cleaned directly, as cheaply
    try:
        data = _FAST_ENCODE(value).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError (a lone surrogate) is a ValueError
        return False
    return b"\\u0000" not in data and not has_digit_run(data) and not nests_deeper_than(data, max_depth)


def _clean(value: Any, depth_left: int) -> tuple[Any, bool]:
    """The cleaned value and whether it differs from ``value`` (so clean data is returned uncopied)."""
    if value is None or isinstance(value, bool):
        return value, False
    if isinstance(value, str):
        cleaned = model_text(value)
        return cleaned, cleaned is not value
    if isinstance(value, int):
        digits = digits_past_limit(value)
        if digits is not None:
            return f"<integer of about {digits} digits>", True
        return (value, False) if type(value) is int else (int(value), True)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")), True
        return (value, False) if type(value) is float else (float(value), True)
    if isinstance(value, (Mapping, list, tuple)):
        if depth_left <= 0:
            return f"<{type(value).__name__} nested deeper than the limit>", True
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            changed = not isinstance(value, dict)
            for key, item in value.items():
                clean_key, key_changed = _clean(key, 0) if isinstance(key, str) else (_key(key), True)
                clean_item, item_changed = _clean(item, depth_left - 1)
                out[clean_key] = clean_item
                changed = changed or key_changed or item_changed
            if len(out) != len(value):
                changed = True
            return (out if changed else value), changed
        items = [_clean(item, depth_left - 1) for item in value]
        changed = not isinstance(value, list) or any(flag for _, flag in items)
        return ([item for item, _ in items] if changed else value), changed
    return _describe(value), True


def _key(key: Any) -> str:
    if isinstance(key, bool) or key is None:
        return "true" if key is True else ("false" if key is False else "null")
    if isinstance(key, (int, float)):
        cleaned, _ = _clean(key, 0)
        return cleaned if isinstance(cleaned, str) else str(cleaned)
    return _describe(key)


def _describe(value: Any) -> str:
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - an object whose __str__ raises is still described
        text = f"<{type(value).__name__}>"
    return model_text(text[:10_000])
