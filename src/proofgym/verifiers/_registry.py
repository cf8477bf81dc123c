"""Verifier kinds by name, so run configs can pick one with ``verifier: {kind: ...}``.

A kind is a :class:`VerifierKind`: its options model (validated strictly from the config) and its builder. Built-in
kinds register here; concrete packages (Verilog) and plugins register through the ``proofgym.verifiers`` entry-point
group with a ``"module:attribute"`` target naming a :class:`VerifierKind`, imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, cast

from pydantic import BaseModel

from proofgym.core import Claim, OptionsError, Registry, RegistryError, require_model_class, validate_options
from proofgym.verifiers._protocol import Verifier


@dataclass(frozen=True)
class VerifierExample:
    """A known case of a verifier kind: with ``options``, the claim ``right`` is certified and ``wrong`` is not
    (a verdict certifies a claim when its outcome is ``certified`` and its decision, if it names one, is the
    claim's: a kind that derives the decision from the facts certifies what it derived)."""

    options: Mapping[str, Any]
    right: Claim
    wrong: Claim


@dataclass(frozen=True)
class VerifierKind:
    """A verifier kind: ``options``, the pydantic model of its config keys (everything beside ``kind``), and
    ``build(options) -> Verifier``, called with validated options.

    ``examples()`` (optional, but expected of every kind that runs offline) returns known cases: the test suite
    checks, for every registered kind, that each right claim is certified and each wrong one is not.

    ``relative_to(options, folder)`` (optional) returns the raw options with the paths the kind reads relative to
    the run config file made relative to that file's ``folder`` instead: a run config loaded from a file calls it
    (see :class:`~proofgym.config.RunConfig`), so a config and what it names can move together.
    """

    options: type[BaseModel]
    build: Callable[[Any], Verifier]
    examples: Callable[[], Sequence[VerifierExample]] | None = None
    relative_to: Callable[[dict[str, Any], Path], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        require_model_class(self.options, "VerifierKind.options")


class VerifierOptionsError(OptionsError):
    """A verifier's options cannot be used: invalid, or (when building) naming something that cannot be loaded.

    ``problems`` holds one pydantic-shaped dict per problem (``loc`` within the verifier's options, ``msg``,
    ``input``, ``type``), so that a run config can name ``verifier.<key>`` and its file.
    """

    @classmethod
    def at(cls, kind: str, key: str, messages: str | Iterable[str], value: Any = None) -> VerifierOptionsError:
        """Problems with option ``key`` of verifier kind ``kind`` (one per message)."""
        messages = [messages] if isinstance(messages, str) else list(messages)
        problems = [{"loc": (key,), "msg": message, "input": value, "type": "value_error"} for message in messages]
        return cls(f"verifier kind {kind!r}: {key}: {'; '.join(messages)}", problems)


VERIFIER_KINDS: Registry[VerifierKind] = Registry("verifier kind", "proofgym.verifiers", check=VerifierKind)


def register_verifier(name: str, options: type[BaseModel] | VerifierKind | str,
                      build: Callable[[Any], Verifier] | None = None) -> None:
    """Register a verifier kind: a :class:`VerifierKind`, its options model (validated from config) and its
    builder, or a ``"module:attribute"`` string naming a :class:`VerifierKind`, imported on first use."""
    if not isinstance(options, (str, VerifierKind)):
        if build is None:
            raise TypeError("register_verifier needs a builder with an options model")
        options = VerifierKind(options, build)
    VERIFIER_KINDS.register(name, options)


def verifier_kinds() -> list[str]:
    """Every registered verifier kind, plugins' included, sorted."""
    return VERIFIER_KINDS.names()


def verifier_kind(kind: str) -> VerifierKind:
    """The registered kind ``kind``; :class:`VerifierOptionsError` (at ``kind``) when it is unknown or cannot be
    loaded."""
    try:
        return VERIFIER_KINDS.get(kind)
    except RegistryError as exc:
        raise VerifierOptionsError.at_kind(str(exc), kind) from None


def validate_verifier_options(kind: str, options: Mapping[str, Any]) -> BaseModel:
    """Validate ``options`` for ``kind`` strictly (``true`` is not a number, ``"3"`` not an integer);
    :class:`VerifierOptionsError` names the unknown kind or each bad key."""
    return cast(BaseModel, validate_options(f"verifier kind {kind!r}", verifier_kind(kind).options, options,
                                            VerifierOptionsError))


def build_verifier(kind: str, options: BaseModel | Mapping[str, Any]) -> Verifier:
    """Build a verifier of ``kind`` from validated (or raw) options."""
    if not isinstance(options, BaseModel):
        options = validate_verifier_options(kind, options)
    return verifier_kind(kind).build(options)
