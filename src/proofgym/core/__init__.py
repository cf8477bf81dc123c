"""Core data types: the claim a completion makes and the verdict a verifier returns."""

from proofgym.core._claim import Claim
from proofgym.core._validation import describe_validation_error
from proofgym.core._verdict import ErrorKind, Outcome, RejectedFact, Verdict, invalid

__all__ = ["Claim", "ErrorKind", "Outcome", "RejectedFact", "Verdict", "describe_validation_error", "invalid"]
