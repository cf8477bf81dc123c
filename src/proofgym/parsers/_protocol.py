"""The parser protocol and the completion and prompt shapes it accepts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from proofgym.parsers._result import ParseResult

Completion: TypeAlias = str | Sequence[Mapping[str, Any]]
"""A completion: plain text, or chat messages (``{"role": ..., "content": ...}``)."""

Prompt: TypeAlias = str | Sequence[Mapping[str, Any]]
"""The prompt a completion answers, in the same two shapes."""


@runtime_checkable
class CompletionParser(Protocol):
    """Turns a completion into a claim.

    ``parse`` never raises, whatever it is given: malformed or hostile input yields
    ``ParseResult(error=...)``. When ``prompt`` is given, the prompt text is never read as the answer
    (see :func:`~proofgym.parsers.response_text`).
    """

    def parse(self, completion: Completion, prompt: Prompt | None = None) -> ParseResult: ...
