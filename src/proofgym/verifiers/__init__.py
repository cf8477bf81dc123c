"""Verifiers: the protocol every verifier implements, and the verifiers proofgym ships."""

from proofgym.verifiers._protocol import TransientVerifierError, Verifier

__all__ = ["TransientVerifierError", "Verifier"]
