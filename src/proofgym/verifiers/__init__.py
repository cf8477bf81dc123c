"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers.

Built in: ``python``, ``ambertrace``, ``rulebook``. Other kinds (``verilog``, plugins') come in through the
``proofgym.verifiers`` entry-point group, loaded on first lookup.
"""

from proofgym.verifiers._ambertrace import AmberTraceOptions, AmberTraceVerifier, build_ambertrace_verifier
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
# A hosted backend: its cases need the service (tests/verifiers replays recorded payloads instead).
register_verifier("ambertrace", AmberTraceOptions, build_ambertrace_verifier)
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
