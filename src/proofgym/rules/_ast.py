"""The canonical form of a loaded rulebook: plain, immutable data that the engine compiles and the
proof checker interprets. Nothing here evaluates anything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

FactType = Literal["integer", "number", "boolean", "enum", "string"]
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
ArithOp = Literal["add", "sub", "mul", "div"]
Posture = Literal["deny", "abstain"]


# ---- expressions (numbers, strings, booleans; a missing fact makes the expression unknown) ----

@dataclass(frozen=True, slots=True)
class FactRef:
    """The value of an input or derived fact."""

    name: str


@dataclass(frozen=True, slots=True)
class Const:
    value: Any


@dataclass(frozen=True, slots=True)
class Arith:
    """``left op right`` on numbers; division by zero makes the expression unknown."""

    op: ArithOp
    left: Expr
    right: Expr


Expr = Union[FactRef, Const, Arith]


# ---- conditions (three-valued: True, False, or None = unknown) ----

@dataclass(frozen=True, slots=True)
class Compare:
    op: CompareOp
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Member:
    """``left in values`` (or ``not in`` when ``negated``)."""

    left: Expr
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class All:
    items: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    items: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Not:
    item: Condition


Condition = Union[Compare, Member, All, AnyOf, Not]
ALWAYS = All(())


# ---- declarations and rules ----

@dataclass(frozen=True, slots=True)
class FactSpec:
    """An input fact: its type, bounds and gate settings."""

    name: str
    type: FactType
    required: bool = True
    minimum: float | None = None
    maximum: float | None = None
    values: tuple[str, ...] = ()  # enum members
    max_length: int | None = None  # strings
    min_confidence: float | None = None  # None: the rulebook's global threshold
    description: str = ""


@dataclass(frozen=True, slots=True)
class DerivedSpec:
    """A derived fact: its type, an optional default (used when no rule derives it), its stratum."""

    name: str
    type: FactType
    default: Any = None
    has_default: bool = False
    stratum: int = 1
    description: str = ""
    values: tuple[str, ...] = ()  # enum members


@dataclass(frozen=True, slots=True)
class DeriveRule:
    """When ``when`` holds, the derived fact ``target`` takes the value of ``value``."""

    name: str
    target: str
    when: Condition
    value: Expr
    explain: str
    stratum: int


@dataclass(frozen=True, slots=True)
class ConstraintRule:
    """``require`` must hold (be True) for any decision in ``blocks`` to be made."""

    name: str
    require: Condition
    blocks: tuple[str, ...]
    explain: str


@dataclass(frozen=True, slots=True)
class DecisionRule:
    """When ``when`` holds and no constraint blocks ``decision``, it is a candidate; the highest
    ``priority`` candidate decides (priorities are unique)."""

    name: str
    decision: str
    priority: int
    when: Condition
    explain: str


@dataclass(frozen=True, slots=True)
class Rulebook:
    name: str
    version: str
    description: str
    decisions: tuple[str, ...]
    posture: Posture
    default_decision: str | None  # the decision the 'deny' posture gives when no rule decides
    min_confidence: float
    facts: tuple[FactSpec, ...]
    derived: tuple[DerivedSpec, ...]
    derive_rules: tuple[DeriveRule, ...]  # sorted by stratum, then file order
    constraints: tuple[ConstraintRule, ...]
    decision_rules: tuple[DecisionRule, ...]  # sorted by priority, highest first
    content_hash: str  # sha256 of the canonical rulebook; enters the verification cache key
    source: str = "<rulebook>"

    def fact(self, name: str) -> FactSpec | None:
        return next((f for f in self.facts if f.name == name), None)

    def derived_fact(self, name: str) -> DerivedSpec | None:
        return next((d for d in self.derived if d.name == name), None)
