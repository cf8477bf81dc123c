"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers."""

from proofgym.verifiers._function import FunctionVerifier, FunctionVerifierOptions, build_function_verifier
from proofgym.verifiers._protocol import TransientVerifierError, Verifier
from proofgym.verifiers._registry import (
    build_verifier,
    register_verifier,
    validate_verifier_options,
    verifier_kinds,
)

register_verifier("python", FunctionVerifierOptions, build_function_verifier)

__all__ = [
    "FunctionVerifier",
    "TransientVerifierError",
    "Verifier",
    "build_verifier",
    "register_verifier",
    "validate_verifier_options",
    "verifier_kinds",
]
