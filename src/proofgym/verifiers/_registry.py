"""Verifier kinds by name, so run configs can pick one with ``verifier: {kind: ...}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from pydantic import BaseModel, ValidationError

from proofgym.core import describe_validation_error
from proofgym.verifiers._protocol import Verifier


@dataclass(frozen=True)
class VerifierKind:
    name: str
    options: type[BaseModel]
    build: Callable[[Any], Verifier]


class VerifierOptionsError(ValueError):
    """A verifier's options cannot be used: invalid, or (when building) naming something that cannot be loaded.

    ``problems`` holds one pydantic-shaped dict per problem (``loc`` within the verifier's options, ``msg``,
    ``input``, ``type``), so that a run config can name ``verifier.<key>`` and its file.
    """

    def __init__(self, message: str, problems: Iterable[Mapping[str, Any]]) -> None:
        super().__init__(message)
        self.problems = tuple({**problem, "loc": tuple(problem["loc"])} for problem in problems)

    @classmethod
    def at(cls, kind: str, key: str, messages: str | Iterable[str], value: Any = None) -> VerifierOptionsError:
        """Problems with option ``key`` of verifier kind ``kind`` (one per message)."""
        messages = [messages] if isinstance(messages, str) else list(messages)
        problems = [{"loc": (key,), "msg": message, "input": value, "type": "value_error"} for message in messages]
        return cls(f"verifier kind {kind!r}: {key}: {'; '.join(messages)}", problems)


_KINDS: dict[str, VerifierKind] = {}


def register_verifier(name: str, options: type[BaseModel], build: Callable[[Any], Verifier]) -> None:
    """Register a verifier kind: its options model (validated from config) and its builder."""
    if name in _KINDS:
        raise ValueError(f"verifier kind {name!r} is already registered")
    _KINDS[name] = VerifierKind(name, options, build)


def verifier_kinds() -> list[str]:
    return sorted(_KINDS)


def validate_verifier_options(kind: str, options: Mapping[str, Any]) -> BaseModel:
    """Validate ``options`` for ``kind`` strictly (``true`` is not a number, ``"3"`` not an integer);
    :class:`VerifierOptionsError` names the unknown kind or each bad key."""
    if kind not in _KINDS:
        message = f"unknown verifier kind {kind!r}; expected one of {verifier_kinds()}"
        raise VerifierOptionsError(message, [{"loc": ("kind",), "msg": message, "input": kind, "type": "value_error"}])
    try:
        return _KINDS[kind].options.model_validate(dict(options), strict=True)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False)
        problems = "; ".join(map(describe_validation_error, errors))
        raise VerifierOptionsError(f"invalid options for verifier kind {kind!r}: {problems}", errors) from None


def build_verifier(kind: str, options: BaseModel | Mapping[str, Any]) -> Verifier:
    """Build a verifier of ``kind`` from validated (or raw) options."""
    if not isinstance(options, BaseModel):
        options = validate_verifier_options(kind, options)
    return _KINDS[kind].build(options)
