"""Size limits that keep every parse bounded in time and memory."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Caps applied while parsing; exceeding one is a format error, never an exception.

    ``max_completion_chars`` caps the response text (after the prompt is removed),
    ``max_json_chars`` the decision block, ``max_json_depth`` its nesting of objects and arrays,
    ``max_facts`` the number of facts, and ``max_string_chars`` the length of the decision and of
    any string fact value. Every limit is a positive int, except ``max_facts``, which may be 0 (no
    facts allowed).
    """

    max_completion_chars: int = 20_000
    max_json_chars: int = 8_000
    max_json_depth: int = 6
    max_facts: int = 64
    max_string_chars: int = 512

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            least = 0 if f.name == "max_facts" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"ParseLimits.{f.name} must be an int >= {least}, got {value!r}")
