"""The bounds every document is held to once parsed: nesting depth and integer size.

Both exist so that what a person writes cannot exhaust the interpreter: Python's parsers and validators
recurse once per level (a file nested 10,000 deep is a ``RecursionError``), and Python refuses to turn
integers of more than 4,300 digits into text (a traceback with no file, line or key). No proofgym file
needs either. The limits are the ones :func:`proofgym.core.bounded_json` records data within, and that
the task app holds request bodies to (:func:`proofgym.core.json_limit_problem`).
"""

from __future__ import annotations

from typing import Any

# MAX_DEPTH: mappings and lists nested deeper than this are refused (the top-level mapping is level 1).
# MAX_INT_DIGITS: integers written with more digits than this are refused.
from proofgym.core import MAX_DEPTH as MAX_DEPTH, MAX_INT_DIGITS as MAX_INT_DIGITS, digits_past_limit  # re-exported
from proofgym.formats._errors import DocumentError


class Refused:
    """What a decoder puts in place of a value it must not return (a key given twice, a constant that is
    not JSON, an integer past the limit), so that :func:`check_tree` reports it with its key path."""

    __slots__ = ("reason", "key")

    def __init__(self, reason: str, key: Any = None) -> None:
        self.reason = reason
        self.key = key


def integer_too_long(digits: int) -> str:
    """The reason an integer written with ``digits`` digits is refused."""
    return f"an integer of {digits} digits; the limit is {MAX_INT_DIGITS} digits"


def too_deep(max_depth: int) -> str:
    """The reason a value nested more than ``max_depth`` levels deep is refused."""
    return f"arrays and mappings nested more than {max_depth} levels deep; the limit is {max_depth} levels"


def check_tree(data: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`DocumentError` at the first (in document order) value nested more than ``max_depth`` deep,
    integer beyond :data:`MAX_INT_DIGITS` digits or :class:`Refused` marker. Iterative, so any depth is safe."""
    stack: list[tuple[Any, tuple[Any, ...], int]] = [(data, (), 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, Refused):
            raise DocumentError(value.reason, path=path if value.key is None else (*path, value.key))
        digits = digits_past_limit(value) if isinstance(value, int) and not isinstance(value, bool) else None
        if digits is not None:  # a parsed integer past the limit (written in hex, say, or by a TOML parser)
            raise DocumentError(integer_too_long(digits), path=path)
        if isinstance(value, (dict, list)):
            if depth >= max_depth:  # a TOML file's dotted keys, which tomllib nests without recursing
                raise DocumentError(too_deep(max_depth), path=path)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((item, (*path, key), depth + 1) for key, item in reversed(list(items)))
