"""Hypothesis strategies for what a model or a client may send: any code point (lone surrogates, NUL and
control characters included) and any JSON-like data (non-finite numbers, huge integers, deep nesting).

Shared by the property tests of the parsers, the reward functions, the rollout loop and the trace store,
so every one of them is fed the same hostile classes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

#: Characters that break encoders or stores: lone surrogates (high, low), NUL, C0 / C1 controls, the BOM,
#: U+FFFF, the replacement character itself, a character beyond the BMP.
NASTY_CHARACTERS = ["\ud800", "\udbff", "\udc00", "\udfff", "\x00", "\x1b", "\x7f", "\x85", "\u2028", "\ufeff",
                    "\uffff", "\ufffd", "\U0001f600"]

#: Any code point, surrogates included (hypothesis' default text leaves them out).
ANY_CHARACTER = st.one_of(st.characters(codec=None, exclude_categories=()), st.sampled_from(NASTY_CHARACTERS),
                          st.characters(categories=["Cs"]))
UNTRUSTED_TEXT = st.text(ANY_CHARACTER, max_size=40)

#: Numbers JSON cannot carry or Python cannot print: NaN, infinities, huge integers, the float edges.
_NUMBERS = {"nan": float("nan"), "inf": float("inf"), "-inf": -float("inf"), "huge": 10**5000,
            "-huge": -(10**5000), "int64+1": 2**63, "int64-1": -(2**63) - 1, "max": 1e308, "tiny": 5e-324, "-0": -0.0}
# By name, mapped to the number: hypothesis' repr of a 5000-digit integer would itself raise.
NASTY_NUMBERS = st.sampled_from(sorted(_NUMBERS)).map(lambda name: _NUMBERS[name])


def nested(depth: int, leaf: Any = 0, *, kind: str = "list") -> Any:
    """``leaf`` inside ``depth`` lists (or objects: ``kind="dict"``), built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


# Deeper data still (10,000 levels) cannot even be printed by Python's repr; tests build it as text instead.
DEEP = st.builds(nested, st.sampled_from([65, 100, 300]), st.just("x"), kind=st.sampled_from(["list", "dict"]))

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), NASTY_NUMBERS, UNTRUSTED_TEXT)
UNTRUSTED_JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(UNTRUSTED_TEXT, children, max_size=4)),
    max_leaves=12,
) | DEEP


def json_text(value: Any) -> str:
    """``value`` as the JSON-like text a model could write: NaN / Infinity as bare words, huge integers as their
    digits (which ``json.dumps`` and ``str`` refuse to print), surrogates as ``\\u`` escapes."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if value.bit_length() > 10_000:
            return ("-" if value < 0 else "") + "1" + "0" * (int(value.bit_length() * 0.30103))
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)  # NaN, Infinity, -Infinity
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(key))}: {json_text(item)}" for key, item in value.items()) + "}"
    return "[" + ", ".join(json_text(item) for item in value) + "]"
