"""What a parser returns: a claim, or the format error that prevented one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from proofgym.core import Claim

FORMAT_ERROR_KINDS = frozenset(
    {
        "empty",
        "too_long",
        "no_decision_block",
        "multiple_decision_blocks",
        "invalid_json",
        "json_too_large",
        "json_too_deep",
        "not_an_object",
        "missing_answer",
        "bad_answer",
        "unknown_decision",
        "bad_facts",
        "too_many_facts",
        "bad_completion",
    }
)
"""The ``FormatError.kind`` values the built-in parsers return."""


@dataclass(frozen=True, slots=True)
class FormatError:
    """Why a completion could not be parsed: ``kind`` is machine-readable, ``message`` is for people."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The outcome of parsing one completion: exactly one of ``claim`` and ``error`` is set."""

    claim: Claim | None = None
    error: FormatError | None = None

    def __post_init__(self) -> None:
        if (self.claim is None) == (self.error is None):
            raise ValueError("ParseResult needs exactly one of claim and error")

    @property
    def ok(self) -> bool:
        """Whether the completion parsed into a claim."""
        return self.claim is not None


class Rejection(Exception):
    """Raised inside a parser to abandon the parse; ``parse`` turns it into ``ParseResult(error=...)``.

    Parsing is a chain of checks that can each fail: an exception keeps every step a plain function
    while ``parse`` stays the single place that converts failures, so it never raises itself.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.error = FormatError(kind, message)


def parse_guarded(claim: Callable[[], Claim]) -> ParseResult:
    """Run a parser's chain of checks, turning a :class:`Rejection` into ``ParseResult(error=...)``."""
    try:
        return ParseResult(claim=claim())
    except Rejection as rejection:
        return ParseResult(error=rejection.error)
