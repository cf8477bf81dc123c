"""Verifiers: the protocol every verifier implements, the registry of kinds, and built-in verifiers."""

from proofgym.verifiers._ambertrace import AmberTraceOptions, AmberTraceVerifier, build_ambertrace_verifier
from proofgym.verifiers._function import FunctionVerifier, FunctionVerifierOptions, build_function_verifier
from proofgym.verifiers._protocol import TransientVerifierError, Verifier
from proofgym.verifiers._rulebook import RulebookOptions, RulebookVerifier, build_rulebook_verifier, verdict_from_report
from proofgym.verifiers._registry import (
    VerifierOptionsError,
    build_verifier,
    register_verifier,
    validate_verifier_options,
    verifier_kinds,
)
from proofgym.verilog._verifier import VerilogVerifierOptions, build_verilog_verifier

register_verifier("python", FunctionVerifierOptions, build_function_verifier)
register_verifier("ambertrace", AmberTraceOptions, build_ambertrace_verifier)
register_verifier("rulebook", RulebookOptions, build_rulebook_verifier)
register_verifier("verilog", VerilogVerifierOptions, build_verilog_verifier)

__all__ = [
    "AmberTraceVerifier",
    "FunctionVerifier",
    "RulebookVerifier",
    "TransientVerifierError",
    "Verifier",
    "VerifierOptionsError",
    "build_verifier",
    "register_verifier",
    "verdict_from_report",
    "validate_verifier_options",
    "verifier_kinds",
]
