"""What a dataset row tells the shaper about the right answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

# Canonical key first, then the alias dataset columns commonly use for it.
_KEYS = {"gold": ("gold", "answer"), "source_facts": ("source_facts", "facts")}


@dataclass(frozen=True, slots=True)
class Reference:
    """The reference a completion is scored against.

    ``gold`` is the right decision (compared with the claim's decision after ``strip().casefold()``);
    ``None`` means there is no label, so correctness rests on the verifier alone. ``source_facts`` are
    the facts the task's source states; when given, every asserted fact must match one of them.
    """

    gold: str | None = None
    source_facts: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_gold("gold", self.gold)
        _check_source_facts("source_facts", self.source_facts)
        if self.source_facts is not None:
            # A private copy: the caller's dataset row must not be able to change a frozen reference.
            object.__setattr__(self, "source_facts", dict(self.source_facts))

    @classmethod
    def from_value(cls, value: Reference | Mapping[str, Any] | None) -> Reference:
        """Build a reference from ``None``, a ``Reference`` or a dataset row.

        A row may carry ``gold`` (alias ``answer``) and ``source_facts`` (alias ``facts``); any other
        key is an unrelated dataset column and is ignored. Raises ``ValueError`` when a known key has
        the wrong type or a key and its alias disagree, ``TypeError`` for any other kind of value.
        """
        if value is None:
            return cls()
        if isinstance(value, Reference):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"a reference must be None, a Reference or a mapping, got {type(value).__name__}")
        gold = _pick(value, "gold")
        facts = _pick(value, "source_facts")
        if gold is not None:
            _check_gold(gold[0], gold[1])
        if facts is not None:
            _check_source_facts(facts[0], facts[1])
        return cls(gold=None if gold is None else gold[1], source_facts=None if facts is None else facts[1])


def _pick(row: Mapping[str, Any], name: str) -> tuple[str, Any] | None:
    """The (key, value) that sets ``name`` in ``row``, or ``None`` when no key sets it."""
    present = [(key, row[key]) for key in _KEYS[name] if key in row and row[key] is not None]
    if len(present) == 2 and present[0][1] != present[1][1]:
        raise ValueError(f"reference keys {present[0][0]!r} and {present[1][0]!r} both set {name} but disagree")
    return present[0] if present else None


def _check_gold(key: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"reference key {key!r} must be a string or None, got {type(value).__name__}: {value!r}")
    # A blank label would make every blank decision "correct".
    if not value.strip():
        raise ValueError(f"reference key {key!r} must not be blank")


def _check_source_facts(key: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValueError(
            f"reference key {key!r} must be a mapping of fact name to value or None, got {type(value).__name__}"
        )
    for name in value:
        if not isinstance(name, str):
            raise ValueError(f"reference key {key!r} must have string fact names, got {name!r}")
