"""Verifier kinds by name, so run configs can pick one with ``verifier: {kind: ...}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ValidationError

from proofgym.core import describe_validation_error
from proofgym.verifiers._protocol import Verifier


@dataclass(frozen=True)
class VerifierKind:
    name: str
    options: type[BaseModel]
    build: Callable[[Any], Verifier]


_KINDS: dict[str, VerifierKind] = {}


def register_verifier(name: str, options: type[BaseModel], build: Callable[[Any], Verifier]) -> None:
    """Register a verifier kind: its options model (validated from config) and its builder."""
    if name in _KINDS:
        raise ValueError(f"verifier kind {name!r} is already registered")
    _KINDS[name] = VerifierKind(name, options, build)


def verifier_kinds() -> list[str]:
    return sorted(_KINDS)


def validate_verifier_options(kind: str, options: Mapping[str, Any]) -> BaseModel:
    """Validate ``options`` for ``kind``; ``ValueError`` names the unknown kind or each bad key."""
    if kind not in _KINDS:
        raise ValueError(f"unknown verifier kind {kind!r}; expected one of {verifier_kinds()}")
    try:
        return _KINDS[kind].options.model_validate(dict(options))
    except ValidationError as exc:
        problems = "; ".join(map(describe_validation_error, exc.errors()))
        raise ValueError(f"invalid options for verifier kind {kind!r}: {problems}") from None


def build_verifier(kind: str, options: BaseModel | Mapping[str, Any]) -> Verifier:
    """Build a verifier of ``kind`` from validated (or raw) options."""
    if not isinstance(options, BaseModel):
        options = validate_verifier_options(kind, options)
    return _KINDS[kind].build(options)
