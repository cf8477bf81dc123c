"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers.

Built in: ``python``, ``ambertrace``, ``rulebook``. Other kinds (``verilog``, plugins') come in through the
``proofgym.verifiers`` entry-point group, loaded on first lookup.
"""

from proofgym.verifiers._ambertrace import AmberTraceOptions, AmberTraceVerifier, build_ambertrace_verifier
from proofgym.verifiers._function import FunctionVerifier, FunctionVerifierOptions, build_function_verifier
from proofgym.verifiers._protocol import TransientVerifierError, Verifier
from proofgym.verifiers._rulebook import RulebookOptions, RulebookVerifier, build_rulebook_verifier, verdict_from_report
from proofgym.verifiers._registry import (
    VERIFIER_KINDS,
    VerifierKind,
    VerifierOptionsError,
    build_verifier,
    register_verifier,
    validate_verifier_options,
    verifier_kind,
    verifier_kinds,
)

register_verifier("python", FunctionVerifierOptions, build_function_verifier)
register_verifier("ambertrace", AmberTraceOptions, build_ambertrace_verifier)
register_verifier("rulebook", RulebookOptions, build_rulebook_verifier)

__all__ = [
    "AmberTraceVerifier",
    "FunctionVerifier",
    "RulebookVerifier",
    "TransientVerifierError",
    "VERIFIER_KINDS",
    "Verifier",
    "VerifierKind",
    "VerifierOptionsError",
    "build_verifier",
    "register_verifier",
    "verdict_from_report",
    "validate_verifier_options",
    "verifier_kind",
    "verifier_kinds",
]
