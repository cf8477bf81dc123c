"""TOML as proofgym reads it from people: ``tomllib``, with depth and integers bounded before it runs."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from proofgym.formats._errors import DocumentError
from proofgym.formats._limits import MAX_DEPTH, MAX_INT_DIGITS, check_tree, integer_too_long, too_deep

# What the pre-scan looks at: comments and strings (skipped; an unterminated one runs to its end),
# brackets (counted) and runs of digits (refused when longer than MAX_INT_DIGITS).
_TOKENS = re.compile(
    r'#[^\n]*'
    r'|"""(?:[^"\\]+|\\.|"(?!""))*(?:"{3,5})?'
    r"|'''(?:[^']+|'(?!''))*(?:'{3,5})?"
    r'|"(?:[^"\\\n]+|\\.)*"?'
    r"|'[^'\n]*'?"
    r"|[\[\]{}]"
    r"|[0-9][0-9_]*",
    re.DOTALL,
)
_ERROR_PLACE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_KEY_BEFORE = re.compile(r"\s*([^=#\[\]{}\n]+?)\s*=")


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
        message = str(exc)
        place = _ERROR_PLACE.search(message)
        line, column = (int(place.group(1)), int(place.group(2))) if place else (None, None)
        raise DocumentError(f"not valid TOML: {_ERROR_PLACE.sub('', message)}", line=line, column=column) from None
    check_tree(data, max_depth)
    return data


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
    start = text.rfind("\n", 0, offset) + 1
    key = _KEY_BEFORE.match(text, start, offset)  # the key of the line, for the message (dotted keys split)
    path = tuple(part.strip().strip("\"'") for part in key.group(1).split(".")) if key else ()
    return DocumentError(reason, line=text.count("\n", 0, offset) + 1, column=offset - start + 1, path=path)
