"""TOML as proofgym reads it from people: ``tomllib``, with depth and integers bounded before it runs."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from proofgym.formats._errors import DocumentError
from proofgym.formats._limits import MAX_DEPTH, MAX_INT_DIGITS, check_tree, integer_too_long, too_deep

# What both scans look at: comments and strings (skipped whole, so that a bracket, a digit or a newline inside
# one is not read; an unterminated one runs to its end), brackets (counted), newlines (where a statement may
# start) and runs of digits (refused when longer than MAX_INT_DIGITS).
_TOKENS = re.compile(
    r'#[^\n]*'
    r'|"""(?:[^"\\]+|\\.|"(?!""))*(?:"{3,5})?'
    r"|'''(?:[^']+|'(?!''))*(?:'{3,5})?"
    r'|"(?:[^"\\\n]+|\\.)*"?'
    r"|'[^'\n]*'?"
    r"|[\[\]{}\n]"
    r"|[0-9][0-9_]*",
    re.DOTALL,
)
_ERROR_PLACE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_KEY_PART = r'[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
_KEY = rf"(?:{_KEY_PART})(?:[ \t]*\.[ \t]*(?:{_KEY_PART}))*"
# A statement: a table header ([a.b] or [[a.b]]) or a key = value line, its key in group "key".
_STATEMENT = re.compile(rf"[ \t]*(?:(?P<header>\[\[?)[ \t]*(?P<table>{_KEY})|(?P<key>{_KEY})[ \t]*=)")
_PARTS = re.compile(_KEY_PART)
# tomllib's reasons that are about a key already taken (the key tuple they quote taken out: the message's path names
# it), said plainly; they point at the statement's key, not where tomllib stopped reading (the end of the value).
_KEY_CONFLICTS = {
    "Cannot overwrite a value": "key given twice, or under a key that already holds a value",
    "Cannot declare twice": "table declared twice",
    "Cannot redefine namespace": "a table declared with [...] cannot be added to with dotted keys",
    "Cannot mutate immutable namespace": "an inline table or array cannot be added to after it is written",
    "Duplicate inline table key": "key given twice in an inline table:",
}
_KEY_TUPLE = re.compile(r"\s*\((?:'[^'\n]*'(?:, )?)+,?\)")


def load_toml(text: str, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """Parse ``text`` as TOML, or raise :class:`~proofgym.formats.DocumentError`.

    TOML itself refuses a key given twice and has no aliases. Refused besides, with the line or key path:
    arrays and inline tables nested deeper than ``max_depth`` (checked before ``tomllib`` runs, since it
    recurses once per level), tables nested deeper (dotted keys) and integers of more than
    :data:`~proofgym.formats.MAX_INT_DIGITS` digits.
    """
    _scan(text, max_depth)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _decode_error(text, str(exc)) from None
    check_tree(data, max_depth)
    return data


def _decode_error(text: str, message: str) -> DocumentError:
    """tomllib's error, naming the key path of the statement it stopped in (tomllib gives only the place)."""
    place = _ERROR_PLACE.search(message)
    reason = _ERROR_PLACE.sub("", message)
    if place is None:
        return DocumentError(f"not valid TOML: {reason}")
    line, column = int(place.group(1)), int(place.group(2))
    offset = _offset(text, line, column)
    statement = _statement(text, offset)
    if statement is None:
        return DocumentError(f"not valid TOML: {reason}", line=line, column=column)
    path, start = statement
    said = _KEY_TUPLE.sub("", reason)
    for tomllib_said, plainly in _KEY_CONFLICTS.items():
        if said.startswith(tomllib_said):
            reason = plainly + said.removeprefix(tomllib_said)
            line, column = _place(text, start)
            break
    return DocumentError(f"not valid TOML: {reason}", line=line, column=column, path=path)


def _scan(text: str, max_depth: int) -> None:
    depth = 0
    for token in _TOKENS.finditer(text):
        char = token.group()
        if char in ("[", "{"):
            depth += 1
            if depth > max_depth:
                raise _at(text, token.start(), too_deep(max_depth))
        elif char in ("]", "}"):
            depth = max(depth - 1, 0)
        elif char[0].isdigit() and len(char) > MAX_INT_DIGITS:
            digits = len(char) - char.count("_")
            if digits > MAX_INT_DIGITS:
                raise _at(text, token.start(), integer_too_long(digits))


def _at(text: str, offset: int, reason: str) -> DocumentError:
    statement = _statement(text, offset)
    line, column = _place(text, offset)
    return DocumentError(reason, line=line, column=column, path=statement[0] if statement else ())


def _place(text: str, offset: int) -> tuple[int, int]:
    """``(line, column)`` of ``offset``, both from 1."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _offset(text: str, line: int, column: int) -> int:
    """The offset of ``line``, ``column`` (both from 1), as tomllib counts them."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return len(text)
    return min(start + column - 1, len(text))


def _statement(text: str, offset: int) -> tuple[tuple[str, ...], int] | None:
    """``(key path, start)`` of the statement ``offset`` lies in: a table header's table, or a key = value line's
    key under the table declared above it; ``None`` before the first statement. Strings and comments are skipped
    whole, and a statement starts only on a line outside every array and inline table, so neither a ``[`` in a
    string nor the lines of a multi-line array are taken for one."""
    table: tuple[str, ...] = ()
    found: tuple[tuple[str, ...], int] | None = None
    depth = 0
    line_start: int | None = 0
    position = 0
    while True:
        if depth == 0 and line_start is not None:
            statement = _STATEMENT.match(text, line_start)
            if statement is not None and statement.start() <= offset:
                if statement.group("header"):
                    table = _key_parts(statement.group("table"))
                    found = (table, statement.start("table"))
                else:
                    found = ((*table, *_key_parts(statement.group("key"))), statement.start("key"))
            line_start = None
        token = _TOKENS.search(text, position, offset)
        if token is None:
            return found
        char = token.group()
        position = token.end()
        if char == "\n":
            line_start = position
        elif char in ("[", "{"):
            depth += 1
        elif char in ("]", "}"):
            depth = max(depth - 1, 0)


def _key_parts(key: str) -> tuple[str, ...]:
    """A dotted key's parts, quotes taken off (``a."b.c"`` is ``("a", "b.c")``)."""
    parts = []
    for part in _PARTS.findall(key):
        if part[:1] == '"':
            parts.append(json.loads(part))
        elif part[:1] == "'":
            parts.append(part[1:-1])
        else:
            parts.append(part)
    return tuple(parts)
