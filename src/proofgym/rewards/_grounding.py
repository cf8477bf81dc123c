"""Which asserted facts are rejected: by the verifier, or for disagreeing with the source."""

from __future__ import annotations

import math
from typing import Any, Mapping

from proofgym.core import Claim, Verdict

_REL_TOL = 1e-9


def rejected_fact_names(verdict: Verdict, claim: Claim, source_facts: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Sorted names of the rejected facts, each counted once.

    The union of the fields the verifier rejected (including required facts the claim never
    asserted) and, when ``source_facts`` is given, the asserted facts the source lacks (inventions)
    or states with another value.
    """
    names = {rejected.field for rejected in verdict.rejected_facts}
    if source_facts is not None:
        for name in claim.facts:
            if name not in source_facts or not facts_match(claim.fact_value(name), _unwrap(source_facts[name])):
                names.add(name)
    return tuple(sorted(names, key=str))


def facts_match(asserted: Any, source: Any) -> bool:
    """Whether an asserted value states the same thing as the source value.

    A bool matches only a bool (``True`` is not ``1``); numbers match numerically within a relative
    tolerance of 1e-9 (``34 == 34.0``); strings match after ``strip().casefold()``; ``None`` matches
    only ``None``; lists and mappings match element by element. Anything else never matches.
    """
    if isinstance(asserted, bool) or isinstance(source, bool):
        return isinstance(asserted, bool) and isinstance(source, bool) and asserted == source
    if _is_number(asserted) and _is_number(source):
        return _numbers_match(asserted, source)
    if isinstance(asserted, str) and isinstance(source, str):
        return asserted.strip().casefold() == source.strip().casefold()
    if asserted is None or source is None:
        return asserted is None and source is None
    if isinstance(asserted, (list, tuple)) and isinstance(source, (list, tuple)):
        return len(asserted) == len(source) and all(map(facts_match, asserted, source))
    if isinstance(asserted, Mapping) and isinstance(source, Mapping):
        return asserted.keys() == source.keys() and all(facts_match(asserted[k], source[k]) for k in asserted)
    return False


def _unwrap(value: Any) -> Any:
    # Same convention as Claim.fact_value: {"value": ..., "confidence": ...} stands for its value.
    if isinstance(value, Mapping) and "value" in value:
        return value["value"]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers_match(a: int | float, b: int | float) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b  # exact, and safe for ints too large for a float
    try:
        return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=0.0)
    except OverflowError:  # an int beyond float range cannot equal any float
        return False
