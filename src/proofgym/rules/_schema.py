"""The YAML shape of a rulebook, as pydantic models (unknown keys are errors), and its JSON Schema.

These models only check the shape; the loader then checks the meaning (names, types, cycles) and builds the
canonical AST. Conditions and operands are unions told apart by their key (``all``, ``fact``, ``div``...), so a
malformed one gets one precise error instead of one per union member.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PlainValidator, StringConstraints, Tag, WithJsonSchema
from pydantic_core import PydanticCustomError

from proofgym.rules._values import FLOAT_MAX

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
RULEBOOK_NAME_PATTERN = r"^[a-z][a-z0-9_]*$"

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
FactTypeName = Literal["integer", "number", "boolean", "enum", "string"]
OpName = Literal["==", "!=", "<", "<=", ">", ">=", "in", "not_in"]

_LITERAL_SCHEMA = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
_LITERAL_EXPECTED = "expected a literal: a string, a finite number or a boolean"


def _literal(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and -FLOAT_MAX <= value <= FLOAT_MAX:  # also rules out NaN
        return value
    raise PydanticCustomError("literal", _LITERAL_EXPECTED)


def _literal_or_list(value: Any) -> Any:
    if not isinstance(value, list):
        return _literal(value)
    if not value:
        raise PydanticCustomError("literal_list", "expected a non-empty list of literals")
    for index, item in enumerate(value):
        try:
            _literal(item)
        except PydanticCustomError:
            raise PydanticCustomError("literal_list", f"item {index}: {_LITERAL_EXPECTED}") from None
    return value


Scalar = Annotated[Any, PlainValidator(_literal), WithJsonSchema(_LITERAL_SCHEMA)]
ScalarOrList = Annotated[
    Any,
    PlainValidator(_literal_or_list),
    WithJsonSchema({"anyOf": [*_LITERAL_SCHEMA["anyOf"], {"type": "array", "minItems": 1, "items": _LITERAL_SCHEMA}]}),
]


def _no_default(schema: dict[str, Any]) -> None:
    """Leave a default that is no valid value (``None`` standing for "absent") out of the JSON Schema."""
    schema.pop("default", None)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# ---- operands ----

_OPERAND_KEYS = ("fact", "value", "add", "sub", "mul", "div")


def _operand_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((f"{key}-operand" for key in _OPERAND_KEYS if key in value), None)
    return "literal-operand"


class FactOperand(_Strict):
    """The value of an input or derived fact."""

    fact: Name = Field(description="an input or derived fact")


class ValueOperand(_Strict):
    """A literal."""

    value: Scalar = Field(description="a string, a finite number or a boolean")


_PAIR: dict[str, Any] = {"min_length": 2, "max_length": 2, "description": "[left, right]"}


class AddOperand(_Strict):
    add: list[Operand] = Field(**_PAIR)


class SubOperand(_Strict):
    sub: list[Operand] = Field(**_PAIR)


class MulOperand(_Strict):
    mul: list[Operand] = Field(**_PAIR)


class DivOperand(_Strict):
    """Division; by zero the result is unknown."""

    div: list[Operand] = Field(**_PAIR)


Operand = Annotated[
    Union[
        Annotated[Scalar, Tag("literal-operand")],
        Annotated[FactOperand, Tag("fact-operand")],
        Annotated[ValueOperand, Tag("value-operand")],
        Annotated[AddOperand, Tag("add-operand")],
        Annotated[SubOperand, Tag("sub-operand")],
        Annotated[MulOperand, Tag("mul-operand")],
        Annotated[DivOperand, Tag("div-operand")],
    ],
    Discriminator(
        _operand_tag,
        custom_error_type="operand",
        custom_error_message="expected an operand: a literal, {fact: F}, {value: V} or {add|sub|mul|div: [a, b]}",
    ),
]


# ---- conditions ----

_CONDITION_KEYS = ("all", "any", "not", "fact", "left")


def _condition_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((f"{key}-condition" for key in _CONDITION_KEYS if key in value), None)
    return None


class AllCondition(_Strict):
    """True when every item is true; false when one is false; else unknown."""

    all: list[Condition] = Field(min_length=1)


class AnyCondition(_Strict):
    """True when one item is true; false when every item is false; else unknown."""

    any: list[Condition] = Field(min_length=1)


class NotCondition(_Strict):
    """The negation (unknown stays unknown)."""

    not_: Condition = Field(alias="not")


class FactCondition(_Strict):
    """Compare a fact with a literal, or test its membership in a list of literals."""

    fact: Name = Field(description="an input or derived fact")
    op: OpName
    value: ScalarOrList = Field(description="a literal; a non-empty list of literals for in / not_in")


Right = Annotated[
    Union[
        Annotated[Operand, Tag("operand-right")],
        Annotated[list[Scalar], Field(min_length=1), Tag("list-right")],
    ],
    Discriminator(lambda value: "list-right" if isinstance(value, list) else "operand-right"),
]


class CompareCondition(_Strict):
    """Compare two operands, or test an operand's membership in a list of literals."""

    left: Operand
    op: OpName
    right: Right = Field(description="an operand; a non-empty list of literals for in / not_in")


Condition = Annotated[
    Union[
        Annotated[AllCondition, Tag("all-condition")],
        Annotated[AnyCondition, Tag("any-condition")],
        Annotated[NotCondition, Tag("not-condition")],
        Annotated[FactCondition, Tag("fact-condition")],
        Annotated[CompareCondition, Tag("left-condition")],
    ],
    Discriminator(
        _condition_tag,
        custom_error_type="condition",
        custom_error_message="expected a condition: {all: [..]}, {any: [..]}, {not: c}, {fact: F, op: OP, value: V} "
        "or {left: A, op: OP, right: B}",
    ),
]

# The tags that pydantic puts into error locations; the loader leaves them out of key paths.
UNION_TAGS = frozenset(
    [f"{key}-operand" for key in _OPERAND_KEYS]
    + ["literal-operand", "operand-right", "list-right"]
    + [f"{key}-condition" for key in _CONDITION_KEYS]
)


# ---- declarations and rules ----

class FactDecl(_Strict):
    """An input fact: what a query may assert, and what the fact gate accepts."""

    type: FactTypeName
    required: bool = Field(True, description="whether a query must assert it")
    min: float | None = Field(None, description="lowest accepted value (integer and number facts)")
    max: float | None = Field(None, description="highest accepted value (integer and number facts)")
    values: list[str] | None = Field(None, min_length=1, description="the members of an enum (enum facts only)")
    max_length: int | None = Field(None, ge=0, description="longest accepted string (string facts only)")
    min_confidence: float | None = Field(
        None, ge=0, le=1, description="minimum confidence; default: the rulebook's min_confidence"
    )
    description: str = ""


class DerivedDecl(_Strict):
    """A fact the rules derive."""

    type: FactTypeName
    default: Scalar = Field(
        None,
        description="the value when no rule derives it; without one the fact stays unknown",
        json_schema_extra=_no_default,
    )
    values: list[str] | None = Field(None, min_length=1, description="the members of an enum (enum facts only)")
    description: str = ""


class DeriveRuleDecl(_Strict):
    """When ``when`` holds, set the derived fact ``derive`` to ``value``."""

    name: Name
    derive: Name = Field(description="the derived fact this rule sets")
    # None: always; the schema shows no default (and no null), as a rulebook omits the key rather than writing null.
    when: Condition = Field(None, description="default: always", json_schema_extra=_no_default)  # type: ignore[assignment]
    value: Operand = Field(True, description="the value it derives (default true)")
    explain: str = Field("", description="an explanation; {fact} placeholders are filled in")


class ConstraintDecl(_Strict):
    """``require`` must hold (be true) for the decisions in ``blocks`` to be made."""

    name: Name
    require: Condition
    blocks: list[str] | None = Field(None, description="the decisions it blocks when it does not hold; default: all")
    explain: str = Field("", description="an explanation; {fact} placeholders are filled in")


class DecisionRuleDecl(_Strict):
    """When ``when`` holds and no constraint blocks ``decide``, this rule is a candidate; the highest priority
    candidate decides."""

    name: Name
    decide: str = Field(description="one of the rulebook's decisions")
    priority: int = Field(description="unique across decision rules; higher wins")
    # None: always; the schema shows no default (and no null), as a rulebook omits the key rather than writing null.
    when: Condition = Field(None, description="default: always", json_schema_extra=_no_default)  # type: ignore[assignment]
    explain: str = Field("", description="an explanation; {fact} placeholders are filled in")


class RulebookDecl(_Strict):
    """A proofgym rulebook (see docs/rulebooks.md)."""

    model_config = ConfigDict(title="proofgym rulebook")

    name: Annotated[str, StringConstraints(pattern=RULEBOOK_NAME_PATTERN)]
    version: str = Field("", description="free text; the content hash is what enters the cache key")
    description: str = ""
    decisions: list[str] = Field(min_length=1, description="every decision the rulebook can give, unique")
    posture: Literal["deny", "abstain"] = Field(
        "deny", description="when no rule decides: deny gives default_decision, abstain is indeterminate"
    )
    default_decision: str | None = Field(None, description="the deny posture's decision (required with deny)")
    min_confidence: float = Field(0.0, ge=0, le=1, description="global minimum confidence of an asserted fact")
    facts: dict[Name, FactDecl] = Field(default_factory=dict, description="the input facts")
    derived: dict[Name, DerivedDecl] = Field(default_factory=dict, description="the facts the rules derive")
    rules: list[DeriveRuleDecl] = Field(default_factory=list, description="derive rules, in any order")
    constraints: list[ConstraintDecl] = Field(default_factory=list)
    decision_rules: list[DecisionRuleDecl] = Field(default_factory=list)


def rulebook_json_schema() -> dict[str, Any]:
    """The JSON Schema of the rulebook format (for editors); ``rulebook.schema.json`` ships a copy."""
    schema = RulebookDecl.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}

