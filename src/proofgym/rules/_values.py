"""Small helpers on fact values shared by the loader, the gate, the engine and the report."""

from __future__ import annotations

import math
import re
import string
import sys
from itertools import islice
from typing import Any, Mapping

# Numbers beyond the float range cannot be compared, serialised or read back reliably by JSON tools, so the gate
# rejects them and the engine treats an arithmetic result beyond it as unknown (overflow).
FLOAT_MAX = sys.float_info.max

_FORMATTER = string.Formatter()
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_SAFE_DEPTH = 6
_JSON_SAFE_ITEMS = 32


def json_type(value: Any) -> str:
    """The JSON name of a value's type (``integer``, ``string``...), or the Python name for anything else."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def json_safe(value: Any, depth: int = 0) -> Any:
    """A JSON-native copy of an arbitrary value, bounded in depth and width, for reporting a rejected fact.

    NaN and infinities become ``"nan"``/``"inf"``/``"-inf"``, integers beyond the float range and non-JSON objects
    a short description; it never raises (keys are stringified, containers are truncated).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value) if -FLOAT_MAX <= value <= FLOAT_MAX else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else repr(value)
    if depth >= _JSON_SAFE_DEPTH:
        return "<...>"
    try:
        if isinstance(value, Mapping):
            return {
                key if isinstance(key, str) else str(json_safe(key, _JSON_SAFE_DEPTH)): json_safe(item, depth + 1)
                for key, item in islice(value.items(), _JSON_SAFE_ITEMS)
            }
        if isinstance(value, (list, tuple)):
            return [json_safe(item, depth + 1) for item in islice(value, _JSON_SAFE_ITEMS)]
    except Exception:  # a hostile container (a Mapping whose items() raises): describe it instead
        pass
    return f"<{type(value).__name__}>"


def render(value: Any) -> str:
    """How a fact value reads in an explanation: JSON-like, integral numbers without ``.0``, ``unknown`` for
    an absent fact."""
    if value is None:
        return "unknown"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is float and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def parse_template(text: str) -> list[tuple[str, str | None]]:
    """Split an explanation template into ``(literal text, fact name or None)`` pieces.

    ``{{``/``}}`` are literal braces. Raises ``ValueError`` on unbalanced braces and on placeholders that are
    not a plain name (``{}``, ``{age:>3}``, ``{age!r}``, ``{a.b}``).
    """
    pieces: list[tuple[str, str | None]] = []
    for literal, field, spec, conversion in _FORMATTER.parse(text):
        if field is not None and (not _NAME.fullmatch(field) or spec or conversion):
            shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ValueError(f"placeholder {shown} must be a fact name in braces, like {{age}}")
        pieces.append((literal, field))
    return pieces
