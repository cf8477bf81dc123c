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

REPLACEMENT = "\ufffd"

#: Data nested deeper than this is kept as a short description instead (JSON encoders recurse).
MAX_DEPTH = 64
#: Integers with more digits than this are kept as a short description (Python refuses to print them).
MAX_INT_DIGITS = 1000
_DIGITS_PER_BIT = math.log10(2)
_MAX_INT_BITS = int(MAX_INT_DIGITS / _DIGITS_PER_BIT)


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
# A JSON string in the encoder's output (escapes included), and what is left once strings are gone.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
# Digits as "1", everything else as " ": a run of MAX_INT_DIGITS + 1 ones is a number too long (a regex for it
# restarts at every digit: 30 us on a 4 KB verdict; translate and find are one pass each).
_DIGITS_TO_ONES = str.maketrans({chr(code): ("1" if 48 <= code <= 57 else " ") for code in range(256)})
_LONG_DIGIT_RUN = "1" * (MAX_INT_DIGITS + 1)
_INNERMOST_PAIR = re.compile(r"\[\]|\{\}")
_KEEP_BRACKETS = {ord(char): None for char in ",:0123456789.-+eEtruefalsn \t\r\n"}


def _already_clean(value: Any, max_depth: int) -> bool:
    """Whether ``value`` passes as it is: the strict encoder takes it (JSON data, finite numbers, under
    Python's recursion limit), its text is valid UTF-8 without NUL, no integer in it is too long, and it
    nests at most ``max_depth`` levels."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return False  # a scalar is cleaned directly, as cheaply
    try:
        text = _FAST_ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        return False
    if "\\u0000" in text or not (text.isascii() or _utf8(text)):
        return False
    if len(text) > MAX_INT_DIGITS and _LONG_DIGIT_RUN in text.translate(_DIGITS_TO_ONES):
        return False
    if text.count("[") + text.count("{") <= max_depth:
        return True
    return _depth(_JSON_STRING.sub("", text), max_depth) <= max_depth


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _depth(text: str, limit: int) -> int:
    """How deeply the brackets of JSON text without strings nest (``limit + 1`` meaning deeper than ``limit``):
    innermost pairs removed, one level per pass of C code, at most ``limit + 1`` passes."""
    brackets = text.translate(_KEEP_BRACKETS)
    depth = 0
    while brackets and depth <= limit:
        shorter = _INNERMOST_PAIR.sub("", brackets)  # both kinds in one pass: one level, not two
        if len(shorter) == len(brackets):
            return limit + 1  # not what the encoder writes: let the walk decide
        brackets, depth = shorter, depth + 1
    return depth if not brackets else limit + 1


def _clean(value: Any, depth_left: int) -> tuple[Any, bool]:
    """The cleaned value and whether it differs from ``value`` (so clean data is returned uncopied)."""
    if value is None or isinstance(value, bool):
        return value, False
    if isinstance(value, str):
        cleaned = model_text(value)
        return cleaned, cleaned is not value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            return f"<integer of about {int(value.bit_length() * _DIGITS_PER_BIT) + 1} digits>", True
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
