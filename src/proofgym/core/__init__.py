"""Core data types: the claim a completion makes and the verdict a verifier returns."""

from proofgym.core._claim import Claim
from proofgym.core._verdict import ErrorKind, Outcome, RejectedFact, Verdict, invalid

__all__ = ["Claim", "ErrorKind", "Outcome", "RejectedFact", "Verdict", "invalid"]
