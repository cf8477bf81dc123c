"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers.

Built in: ``python``, ``rulebook``. Other kinds (``ambertrace``, ``verilog``, plugins') come in through the
``proofgym.verifiers`` entry-point group, loaded on first lookup.
"""

from typing import Any

from proofgym.verifiers._examples import python_examples, rulebook_examples
from proofgym.verifiers._function import FunctionVerifier, FunctionVerifierOptions, build_function_verifier
from proofgym.verifiers._protocol import TransientVerifierError, Verifier
from proofgym.verifiers._rulebook import RulebookOptions, RulebookVerifier, build_rulebook_verifier, verdict_from_report
from proofgym.verifiers._registry import (
    VERIFIER_KINDS,
    VerifierExample,
    VerifierKind,
    VerifierOptionsError,
    build_verifier,
    register_verifier,
    validate_verifier_options,
    verifier_kind,
    verifier_kinds,
)

register_verifier("python", VerifierKind(FunctionVerifierOptions, build_function_verifier, python_examples))


def __getattr__(name: str) -> Any:
    if name == "AmberTraceVerifier":  # moved to proofgym.ambertrace; kept here for compatibility
        from proofgym.ambertrace import AmberTraceVerifier

        return AmberTraceVerifier
    raise AttributeError(f"module 'proofgym.verifiers' has no attribute {name!r}")

register_verifier("rulebook", VerifierKind(RulebookOptions, build_rulebook_verifier, rulebook_examples))

__all__ = [
    "AmberTraceVerifier",
    "FunctionVerifier",
    "RulebookVerifier",
    "TransientVerifierError",
    "VERIFIER_KINDS",
    "Verifier",
    "VerifierExample",
    "VerifierKind",
    "VerifierOptionsError",
    "build_verifier",
    "register_verifier",
    "verdict_from_report",
    "validate_verifier_options",
    "verifier_kind",
    "verifier_kinds",
]
