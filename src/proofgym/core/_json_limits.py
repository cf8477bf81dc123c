"""JSON text from outside, checked before it is parsed: how deeply it nests and how long its integers are.

Python's ``json`` parser recurses once per nested array or object and raises ``RecursionError`` on text
nested about a thousand levels deep; it raises ``ValueError`` on an integer of more than 4,300 digits
(the interpreter's limit on converting digits to an ``int``). Both happen before the parsed value exists,
so no field can be named, and what parses just under those limits could only be recorded as a
description anyway (:func:`~proofgym.core.bounded_json` keeps :data:`MAX_DEPTH` levels and
:data:`MAX_INT_DIGITS` digits). :func:`json_limit_problem` finds, without parsing, the first place where
a text goes past the same limits and names it by its path (keys and indices), so that a server refuses
such a body with an error saying where and which limit, and accepts only data it can record exactly.

The check works on the text as it is and does not validate it: text that is not JSON passes unless it
looks too deep, and the parser that reads it next says what is wrong with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from proofgym.core._limits import MAX_DEPTH, MAX_INT_DIGITS, has_digit_run, nests_deeper_than, outside_strings
from proofgym.core._text import model_text

#: The deepest a path is followed to name a place; beyond it the problem is named by the start of the path.
_PATH_SHOWN = 8
#: Tokens read to locate a problem before giving up on its path (only a body that breaks a limit is read so).
_MAX_TOKENS_LOCATED = 500_000

# A JSON string (escapes included), matched in linear time: runs of ordinary bytes between escapes.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_OPEN = frozenset(b"[{")


@dataclass(frozen=True)
class JSONLimitProblem:
    """Where a JSON text breaks a limit: ``kind`` (``json_too_deep`` or ``json_integer_too_long``), the
    ``path`` of keys and indices from the top to the offending value, and a ``message`` naming the limit."""

    kind: Literal["json_too_deep", "json_integer_too_long"]
    path: tuple[str | int, ...]
    message: str


def json_limit_problem(text: bytes | str, *, max_depth: int = MAX_DEPTH,
                       max_int_digits: int = MAX_INT_DIGITS) -> JSONLimitProblem | None:
    """The first place where ``text`` nests arrays and objects more than ``max_depth`` levels deep (the top
    level is level 1) or writes an integer of more than ``max_int_digits`` digits; ``None`` when it does
    neither. Strings are skipped, so text *inside* a string never counts.

    Costs a few passes of C code over ``text`` (about a millisecond per megabyte) when it is within the
    limits (the common case); only a text that breaks one is read token by token, to name the path.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if nests_deeper_than(data, max_depth):
        return _locate(data, max_depth, max_int_digits) or _too_deep((), max_depth)
    # The digit run counts strings too: a bound, cheap to take, that most texts are within.
    if has_digit_run(data, max_int_digits):
        outside = outside_strings(data)
        if has_digit_run(outside, max_int_digits) and _long_integer(max_int_digits).search(outside):
            return _locate(data, max_depth, max_int_digits) or _too_long((), None, max_int_digits)
    return None


@lru_cache(maxsize=8)
def _long_integer(max_digits: int) -> re.Pattern[bytes]:
    # An integer literal (not the fraction or exponent of a number) of more than max_digits digits.
    return re.compile(rb"(?<![\d.eE+-])-?\d{%d,}(?![\d.eE])" % (max_digits + 1))


@lru_cache(maxsize=8)
def _token(max_digits: int) -> re.Pattern[bytes]:
    return re.compile(_STRING + rb"|[\[\]{},:]|" + _long_integer(max_digits).pattern, re.DOTALL)


def _locate(data: bytes, max_depth: int, max_int_digits: int) -> JSONLimitProblem | None:
    """The first problem in ``data``, with the path to it (read token by token); ``None`` when it is not
    found within the tokens read."""
    stack: list[list[str | int | None]] = []  # per open container: its kind, then the current key or index
    last_string = b'""'
    for count, match in enumerate(_token(max_int_digits).finditer(data)):
        if count > _MAX_TOKENS_LOCATED:
            break
        token = match.group()
        first = token[0]
        if first in _OPEN:
            if len(stack) >= max_depth:
                return _too_deep(_path(stack), max_depth)
            stack.append([first, 0 if first == ord("[") else None])
        elif token in (b"]", b"}"):
            if stack:
                stack.pop()
        elif token == b",":
            if stack:
                top = stack[-1]
                top[1] = top[1] + 1 if top[0] == ord("[") and isinstance(top[1], int) else None
        elif token == b":":
            if stack and stack[-1][0] == ord("{"):
                stack[-1][1] = _key(last_string)
        elif first == ord('"'):
            last_string = token
        else:
            return _too_long(_path(stack), len(token.lstrip(b"-")), max_int_digits)
    return None


def _path(stack: list[list[str | int | None]]) -> tuple[str | int, ...]:
    return tuple(part for _, part in stack if part is not None)


def _key(token: bytes) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        key = token[1:-1].decode("utf-8", "replace")
    return model_text(key) if isinstance(key, str) else str(key)


def _too_deep(path: tuple[str | int, ...], max_depth: int) -> JSONLimitProblem:
    return JSONLimitProblem("json_too_deep", path, f"arrays and objects nested more than {max_depth} levels deep"
                                                   f"{_at(path)}; the limit is {max_depth} levels")


def _too_long(path: tuple[str | int, ...], digits: int | None, max_digits: int) -> JSONLimitProblem:
    size = f"of {digits} digits" if digits is not None else f"of more than {max_digits} digits"
    return JSONLimitProblem("json_integer_too_long", path,
                            f"an integer {size}{_at(path)}; the limit is {max_digits} digits")


def _at(path: tuple[str | int, ...]) -> str:
    """`` at labels[0].source_facts`` for a path (its start, when it is long); nothing for the top level."""
    if not path:
        return ""
    shown = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path[:_PATH_SHOWN])
    return f" at {shown.lstrip('.')}{'...' if len(path) > _PATH_SHOWN else ''}"
