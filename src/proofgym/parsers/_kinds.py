"""Parser kinds by name, so run configs can pick one with ``parser: {kind: ...}``.

A kind is a :class:`ParserKind`: its options model (every key of the ``parser`` section beside ``kind``, validated
strictly where the kind is defined) and its builder. ``json_block`` and ``regex`` are built in; other kinds
(``verilog``, plugins') register through the ``proofgym.parsers`` entry-point group with a ``"module:attribute"``
target naming a :class:`ParserKind`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import OptionsError, Registry, RegistryError, require_model_class, validate_options
from proofgym.parsers._json_block import JSONBlockParser
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._protocol import CompletionParser
from proofgym.parsers._regex_fact import RegexFactParser


class ParserOptionsError(OptionsError):
    """A parser kind is unknown or its options are invalid; ``problems`` locate each key under ``parser``."""


@dataclass(frozen=True)
class ParserKind:
    """A parser kind: ``options``, the pydantic model of its config keys, and ``build(options) -> parser``."""

    options: type[BaseModel]
    build: Callable[[Any], CompletionParser]

    def __post_init__(self) -> None:
        require_model_class(self.options, "ParserKind.options")


PARSER_KINDS: Registry[ParserKind] = Registry("parser kind", "proofgym.parsers", check=ParserKind)


class LimitsConfig(BaseModel):
    """Bounds on what a parser will read (:class:`ParseLimits` as config keys)."""

    model_config = ConfigDict(extra="forbid")

    max_completion_chars: int = Field(20_000, ge=1)
    max_json_chars: int = Field(8_000, ge=1)
    max_json_depth: int = Field(6, ge=1)
    max_facts: int = Field(64, ge=0)
    max_string_chars: int = Field(512, ge=1)

    def limits(self) -> ParseLimits:
        return ParseLimits(**self.model_dump())


class DecisionParserOptions(BaseModel):
    """Options of the ``json_block`` and ``regex`` kinds (``regex`` reads ``decisions`` and ``limits`` only)."""

    model_config = ConfigDict(extra="forbid")

    answer_key: str = "classification"
    facts_key: str = "facts"
    tag: str = "decision"
    reasoning_tag: str = "reasoning"
    decisions: list[str] | None = None
    require_facts: bool = False
    limits: LimitsConfig = LimitsConfig()


def _json_block(options: DecisionParserOptions) -> CompletionParser:
    return JSONBlockParser(answer_key=options.answer_key, facts_key=options.facts_key, tag=options.tag,
                           reasoning_tag=options.reasoning_tag, decisions=options.decisions,
                           require_facts=options.require_facts, limits=options.limits.limits())


def _regex(options: DecisionParserOptions) -> CompletionParser:
    return RegexFactParser(decisions=options.decisions, limits=options.limits.limits())


def register_parser(name: str, kind: ParserKind | str) -> None:
    """Register a parser kind: a :class:`ParserKind`, or a ``"module:attribute"`` string naming one."""
    PARSER_KINDS.register(name, kind)


def parser_kinds() -> list[str]:
    """Every registered parser kind, plugins' included, sorted."""
    return PARSER_KINDS.names()


def parser_kind(kind: str) -> ParserKind:
    """The registered kind ``kind``; :class:`ParserOptionsError` (at ``kind``) when unknown or not loadable."""
    try:
        return PARSER_KINDS.get(kind)
    except RegistryError as exc:
        raise ParserOptionsError.at_kind(str(exc), kind) from None


def validate_parser_options(kind: str, options: Mapping[str, Any]) -> BaseModel:
    """``options`` validated strictly by ``kind``'s model; :class:`ParserOptionsError` names each bad key."""
    validated: BaseModel = validate_options(f"parser kind {kind!r}", parser_kind(kind).options, options,
                                            ParserOptionsError)
    return validated


def build_parser(kind: str, options: BaseModel | Mapping[str, Any] | None = None) -> CompletionParser:
    """A parser of ``kind`` from validated (or raw) options."""
    if not isinstance(options, BaseModel):
        options = validate_parser_options(kind, options or {})
    return parser_kind(kind).build(options)


register_parser("json_block", ParserKind(DecisionParserOptions, _json_block))
register_parser("regex", ParserKind(DecisionParserOptions, _regex))
