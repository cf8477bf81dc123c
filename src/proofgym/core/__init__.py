"""Core data types: the claim a completion makes, the verdict a verifier returns, and the one rule for untrusted text
(with the limits JSON text from outside must meet before it is parsed)."""

from proofgym.core._claim import Claim
from proofgym.core._json_limits import JSONLimitProblem, json_limit_problem
from proofgym.core._redact import is_secret_name, redact_url
from proofgym.core._text import bounded_json, model_text, text_bytes
from proofgym.core._validation import describe_validation_error
from proofgym.core._verdict import ErrorKind, Outcome, RejectedFact, Verdict, invalid

__all__ = [
    "Claim", "ErrorKind", "JSONLimitProblem", "Outcome", "RejectedFact", "Verdict", "bounded_json",
    "describe_validation_error", "invalid", "is_secret_name", "json_limit_problem", "model_text", "redact_url",
    "text_bytes",
]
