"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers.

Built in: ``python``. Other kinds (``rulebook`` from :mod:`proofgym.domains`, ``ambertrace``, ``verilog``, ``math``,
plugins') come in through the ``proofgym.verifiers`` entry-point group, loaded on first lookup.
"""

from proofgym.verifiers._examples import python_examples
from proofgym.verifiers._function import FunctionVerifier, FunctionVerifierOptions, build_function_verifier
from proofgym.verifiers._protocol import TransientVerifierError, Verifier
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


__all__ = [
    "FunctionVerifier",
    "TransientVerifierError",
    "VERIFIER_KINDS",
    "Verifier",
    "VerifierExample",
    "VerifierKind",
    "VerifierOptionsError",
    "build_verifier",
    "register_verifier",
    "validate_verifier_options",
    "verifier_kind",
    "verifier_kinds",
]
