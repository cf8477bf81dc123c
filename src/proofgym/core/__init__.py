"""Core data types: the claim a completion makes, the verdict a verifier returns, and the one rule for untrusted text
(with the limits JSON text from outside must meet before it is parsed); the one registry mechanism every extensible
kind uses, and the error every config problem is reported with."""

from proofgym.core._claim import Claim
from proofgym.core._config_error import (
    ConfigError,
    OptionsError,
    config_problems,
    problem_line,
    require_model_class,
    validate_options,
)
from proofgym.core._json_limits import JSONLimitProblem, json_limit_problem
from proofgym.core._limits import MAX_DEPTH, MAX_INT_DIGITS, digits_past_limit, has_digit_run, nests_deeper_than
from proofgym.core._redact import REDACTED, is_secret_name, redact_secrets, redact_text, redact_url
from proofgym.core._replies import EXCERPT_CHARS, error_detail, excerpt, retry_after_seconds, usage_counts
from proofgym.core._registry import Registry, RegistryError, load_target
from proofgym.core._text import CONTROL_CHARACTERS, bounded_json, model_text, show_controls, text_bytes
from proofgym.core._validation import describe_validation_error
from proofgym.core._verdict import ErrorKind, Outcome, RejectedFact, Verdict, invalid

__all__ = [
    "CONTROL_CHARACTERS", "Claim", "ConfigError", "EXCERPT_CHARS", "ErrorKind", "JSONLimitProblem", "MAX_DEPTH",
    "MAX_INT_DIGITS", "OptionsError", "Outcome", "REDACTED", "Registry", "RegistryError", "RejectedFact", "Verdict",
    "bounded_json", "config_problems", "describe_validation_error", "digits_past_limit", "error_detail", "excerpt",
    "has_digit_run", "invalid", "is_secret_name", "json_limit_problem", "load_target", "model_text",
    "nests_deeper_than", "problem_line", "redact_secrets", "redact_text", "redact_url", "require_model_class",
    "retry_after_seconds", "show_controls", "text_bytes", "usage_counts", "validate_options",
]
