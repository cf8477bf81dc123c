"""Core data types: the claim a completion makes, the verdict a verifier returns, and the one rule for untrusted text."""

from proofgym.core._claim import Claim
from proofgym.core._text import bounded_json, model_text, text_bytes
from proofgym.core._validation import describe_validation_error
from proofgym.core._verdict import ErrorKind, Outcome, RejectedFact, Verdict, invalid

__all__ = [
    "Claim", "ErrorKind", "Outcome", "RejectedFact", "Verdict", "bounded_json", "describe_validation_error", "invalid",
    "model_text", "text_bytes",
]
