"""Checking the answer and the facts a completion asserts."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from proofgym.core import model_text
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._result import Rejection

_FACT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_WRAPPED_KEYS = frozenset({"value", "confidence"})


def normalise_decisions(decisions: Collection[str] | None) -> frozenset[str] | None:
    """The allowed decisions, normalised like answers; ``None`` allows any decision."""
    if decisions is None:
        return None
    if isinstance(decisions, str) or not all(isinstance(d, str) and d.strip() for d in decisions):
        raise TypeError("decisions must be a collection of non-empty strings")
    return frozenset(normalise_text(d) for d in decisions)


def normalise_text(text: str) -> str:
    """How answers are compared: surrounding whitespace dropped, case folded."""
    return text.strip().casefold()


def check_answer(raw: Any, decisions: Collection[str] | None, limits: ParseLimits) -> str:
    """The normalised decision, or :class:`Rejection` (``bad_answer`` or ``unknown_decision``)."""
    if not isinstance(raw, str):
        raise Rejection("bad_answer", f"the answer must be a string, got {type(raw).__name__}")
    if len(raw) > limits.max_string_chars:
        raise Rejection("bad_answer", f"the answer has {len(raw)} characters, limit {limits.max_string_chars}")
    if not _encodable(raw):
        raise Rejection("bad_answer", "the answer is not valid Unicode text")
    decision = normalise_text(raw)
    if not decision:
        raise Rejection("bad_answer", "the answer is empty")
    if decisions is not None and decision not in decisions:
        raise Rejection("unknown_decision", f"{decision[:80]!r} is not one of {sorted(decisions)}")
    return decision


def check_facts(raw: Any, limits: ParseLimits) -> dict[str, Any]:
    """The facts as a plain dict, or :class:`Rejection` (``bad_facts`` or ``too_many_facts``).

    A fact value is a JSON scalar or ``{"value": scalar, "confidence": number in [0, 1]}``
    (``confidence`` optional, no other keys); a confidence is returned as a float.
    """
    if not isinstance(raw, Mapping):
        raise Rejection("bad_facts", f"facts must be an object, got {type(raw).__name__}")
    if len(raw) > limits.max_facts:
        raise Rejection("too_many_facts", f"{len(raw)} facts, limit {limits.max_facts}")
    facts: dict[str, Any] = {}
    for name, value in raw.items():
        check_fact_name(name)
        if isinstance(value, Mapping):
            facts[name] = _check_wrapped(name, value, limits)
        else:
            facts[name] = check_scalar(name, value, limits)
    return facts


def check_fact_name(name: Any) -> None:
    """Raise :class:`Rejection` unless ``name`` is an identifier of at most 64 ASCII characters."""
    if not isinstance(name, str) or not _FACT_NAME.fullmatch(name):
        raise Rejection("bad_facts", f"fact name {str(name)[:80]!r} is not an identifier of at most 64 characters")


def check_scalar(name: str, value: Any, limits: ParseLimits) -> Any:
    """``value`` if it is a usable scalar fact value, else :class:`Rejection` (``bad_facts``)."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Rejection("bad_facts", f"fact {name!r} is not a finite number")
        return value
    if isinstance(value, str):
        if len(value) > limits.max_string_chars:
            raise Rejection("bad_facts", f"fact {name!r} has {len(value)} characters, limit {limits.max_string_chars}")
        if not _encodable(value):
            raise Rejection("bad_facts", f"fact {name!r} is not valid Unicode text")
        return value
    raise Rejection("bad_facts", f"fact {name!r} must be a scalar, got {type(value).__name__}")


def _check_wrapped(name: str, wrapped: Mapping[str, Any], limits: ParseLimits) -> dict[str, Any]:
    if "value" not in wrapped or not set(wrapped) <= _WRAPPED_KEYS:
        raise Rejection("bad_facts", f'fact {name!r} must be a scalar or {{"value": ..., "confidence": ...}}')
    checked = {"value": check_scalar(name, wrapped["value"], limits)}
    if "confidence" in wrapped:
        confidence = wrapped["confidence"]
        # The range test also rejects NaN and infinities; math.isfinite would overflow on huge ints.
        if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
            raise Rejection("bad_facts", f"fact {name!r} confidence must be a number in [0, 1]")
        checked["confidence"] = float(confidence)
    return checked


def _encodable(text: str) -> bool:
    # Answers and facts are text the verifier reads: one decoded from a JSON escape of a lone surrogate or
    # of NUL ("\ud800", "\u0000") is refused, not silently replaced (the one rule: proofgym.core.model_text).
    return model_text(text) is text
