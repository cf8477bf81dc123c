"""The fact gate: which asserted facts a query may use. Anything unknown, mistyped, out of range or not
confident enough is rejected with reasons; a required fact that is missing is rejected too. It never raises."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping

from proofgym.core import RejectedFact
from proofgym.rules._ast import FactSpec, Rulebook
from proofgym.rules._values import FLOAT_MAX, json_safe, json_type, render

# A check returns the value to use (34.0 becomes 34 for an integer) and the problem, or None when it is fine.
Check = Callable[[Any], "tuple[Any, str | None]"]

_SCALARS = frozenset({bool, int, float, str})
_FACT_OBJECT_KEYS = frozenset({"value", "confidence"})


def gate(rulebook: Rulebook, facts: Mapping[str, Any]) -> tuple[dict[str, Any], list[RejectedFact], dict[str, float]]:
    """Split asserted facts into accepted values, rejected facts (with reasons) and the accepted facts'
    confidences (1.0 for plain scalars). A kernel keeps a compiled :class:`FactGate` instead."""
    return FactGate(rulebook)(facts)


class FactGate:
    """The gate of one rulebook, with each fact's check compiled once."""

    def __init__(self, rulebook: Rulebook) -> None:
        self._checks = {spec.name: _check(spec) for spec in rulebook.facts}
        self._thresholds = {
            spec.name: rulebook.min_confidence if spec.min_confidence is None else spec.min_confidence
            for spec in rulebook.facts
        }
        self._required = tuple(spec.name for spec in rulebook.facts if spec.required)
        self._derived = frozenset(spec.name for spec in rulebook.derived)

    def __call__(self, facts: Mapping[str, Any]) -> tuple[dict[str, Any], list[RejectedFact], dict[str, float]]:
        accepted: dict[str, Any] = {}
        confidences: dict[str, float] = {}
        rejected: list[RejectedFact] = []
        if not isinstance(facts, Mapping):
            return accepted, [RejectedFact("facts", json_safe(facts), ("expected an object of facts",))], confidences
        for name, raw in facts.items():
            check = self._checks.get(name)
            if check is None:
                field = name if isinstance(name, str) else str(json_safe(name))
                reason = "a derived fact cannot be asserted" if name in self._derived else "unknown fact"
                rejected.append(RejectedFact(field, json_safe(raw), (reason,)))
                continue
            value, confidence = raw, 1.0
            if type(raw) not in _SCALARS and isinstance(raw, Mapping):
                value, confidence, problem = _unwrap(raw)
                if problem:
                    rejected.append(RejectedFact(name, json_safe(value), (problem,)))
                    continue
            value, problem = check(value)
            threshold = self._thresholds[name]
            if problem is None and confidence >= threshold:
                accepted[name] = value
                confidences[name] = confidence
                continue
            reasons = [problem] if problem else []
            if confidence < threshold:
                reasons.append(f"confidence {confidence:g} is below the minimum {threshold:g}")
            rejected.append(RejectedFact(name, json_safe(value), tuple(reasons)))
        for name in self._required:
            if name not in facts:
                rejected.append(RejectedFact(name, None, ("required fact missing",)))
        return accepted, rejected, confidences


def _unwrap(raw: Mapping[Any, Any]) -> tuple[Any, float, str | None]:
    """``{value, confidence}`` -> (value, confidence, problem)."""
    try:
        keys = set(raw)
    except Exception:  # a hostile mapping
        return raw, 1.0, "expected a literal or {value, confidence}"
    if "value" not in keys or not keys <= _FACT_OBJECT_KEYS:
        return raw, 1.0, "expected a literal or {value, confidence}"
    confidence = raw.get("confidence", 1.0)
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0.0 <= confidence <= 1.0  # also rules out NaN
    ):
        return raw["value"], 1.0, f"confidence must be a number between 0 and 1, got {_shown(confidence)}"
    return raw["value"], float(confidence), None


def _shown(value: Any) -> str:
    """A short text for a value in a reason."""
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "...")
    if isinstance(value, float) and math.isfinite(value) or isinstance(value, (bool, int)) and abs(value) < 1e18:
        return json.dumps(value)
    return json_type(value) if not isinstance(value, float) else repr(value)


def _check(spec: FactSpec) -> Check:
    if spec.type in ("integer", "number"):
        return _number_check(spec)
    if spec.type == "boolean":
        return _boolean_check
    if spec.type == "enum":
        return _enum_check(spec.values)
    return _string_check(spec.max_length)


def _number_check(spec: FactSpec) -> Check:
    integer = spec.type == "integer"
    expected = "expected an integer" if integer else "expected a number"
    low, high = spec.minimum, spec.maximum

    def check(value: Any) -> tuple[Any, str | None]:
        if type(value) is not int and (type(value) is not float or integer):  # off the fast path
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return value, f"{expected}, got {json_type(value)}"
            if isinstance(value, float) and math.isfinite(value):  # 34.0 for an integer, or a float subclass
                if integer and not value.is_integer():
                    return value, f"{expected}, got {_shown(value)}"
                value = int(value) if integer else float(value)
            elif isinstance(value, int):  # an int subclass
                value = int(value)
        if not -FLOAT_MAX <= value <= FLOAT_MAX:  # NaN fails this too
            return value, f"expected a finite number within the float range, got {_shown(value)}"
        if low is not None and value < low:
            return value, f"{render(value)} is below the minimum {render(low)}"
        if high is not None and value > high:
            return value, f"{render(value)} is above the maximum {render(high)}"
        return value, None

    return check


def _boolean_check(value: Any) -> tuple[Any, str | None]:
    if value is True or value is False:
        return value, None
    return value, f"expected a boolean, got {json_type(value)}"


def _enum_check(values: tuple[str, ...]) -> Check:
    members = frozenset(values)
    expected = f"expected one of {', '.join(values)}"

    def check(value: Any) -> tuple[Any, str | None]:
        if isinstance(value, str) and value in members:
            return str(value), None
        return value, f"{expected}, got {_shown(value)}"

    return check


def _string_check(max_length: int | None) -> Check:
    def check(value: Any) -> tuple[Any, str | None]:
        if not isinstance(value, str):
            return value, f"expected a string, got {json_type(value)}"
        if max_length is not None and len(value) > max_length:
            return value, f"longer than {max_length} characters ({len(value)})"
        return str(value), None

    return check
