"""Decoding a decision block's JSON within size and depth limits."""

from __future__ import annotations

import json
from typing import Any

from proofgym.core import nests_deeper_than
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._result import Rejection


def decode_json(text: str, limits: ParseLimits) -> Any:
    """Decode ``text`` as strict JSON, or raise :class:`Rejection`.

    The size and depth are checked before ``json.loads`` runs, so it can neither recurse deeply nor
    chew on megabytes. Duplicate keys are rejected: ``{"a": "permit", "a": "deny"}`` is a hedge
    whose reading would depend on the decoder. ``NaN`` and ``Infinity`` are not JSON and are rejected.
    """
    if len(text) > limits.max_json_chars:
        raise Rejection("json_too_large", f"decision block has {len(text)} characters, limit {limits.max_json_chars}")
    if nests_deeper_than(text.encode("utf-8", "surrogatepass"), limits.max_json_depth):
        raise Rejection("json_too_deep", f"decision block nests deeper than {limits.max_json_depth}")
    try:
        return json.loads(text, object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is a 5000-digit int
        raise Rejection("invalid_json", f"decision block is not valid JSON: {str(exc)[:200]}") from None


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise Rejection("invalid_json", "decision block has a duplicate key")
    return result


def _reject_constant(name: str) -> Any:
    raise Rejection("invalid_json", f"decision block contains {name}, which is not JSON")
