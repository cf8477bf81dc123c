"""JSON as proofgym reads it from people: strict, one key once, depth and integers bounded."""

from __future__ import annotations

import json
from typing import Any

from proofgym.core import json_limit_problem
from proofgym.formats._errors import DocumentError
from proofgym.formats._limits import MAX_DEPTH, Refused, check_tree


def load_json(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode ``text`` as strict JSON, or raise :class:`~proofgym.formats.DocumentError`.

    Refused, with the line or the key path: nesting deeper than ``max_depth`` and integers of more than
    :data:`~proofgym.formats.MAX_INT_DIGITS` digits (both found before decoding, by
    :func:`proofgym.core.json_limit_problem`, so decoding can neither recurse deeply nor hit Python's
    digit limit), a key given twice in one object (``{"a": 1, "a": 2}`` would otherwise keep the last)
    and ``NaN`` / ``Infinity`` (not JSON).
    """
    problem = json_limit_problem(text, max_depth=max_depth)
    if problem is not None:
        raise DocumentError(problem.message)
    try:
        data = json.loads(text, object_pairs_hook=_object, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    check_tree(data, max_depth)
    return data


def _object(pairs: list[tuple[str, Any]]) -> Any:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return Refused("key given twice in one object", key=key)
        seen.add(key)
    raise AssertionError("unreachable: a dict shorter than its pairs has a repeated key")


def _constant(name: str) -> Refused:
    return Refused(f"{name} is not JSON")
