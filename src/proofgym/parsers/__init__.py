"""Parsers: turn a completion into a :class:`~proofgym.core.Claim`, or say why it is malformed.

A parser never raises: every malformed, oversized or hostile completion becomes a
:class:`FormatError` with a machine-readable ``kind``. The prompt is never parsed as the answer.
"""

from proofgym.parsers._blocks import find_blocks
from proofgym.parsers._json_block import JSONBlockParser
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._protocol import Completion, CompletionParser, Prompt
from proofgym.parsers._regex_fact import RegexFactParser
from proofgym.parsers._response import response_text
from proofgym.parsers._result import FORMAT_ERROR_KINDS, FormatError, ParseResult

__all__ = [
    "FORMAT_ERROR_KINDS",
    "Completion",
    "CompletionParser",
    "FormatError",
    "JSONBlockParser",
    "ParseLimits",
    "ParseResult",
    "Prompt",
    "RegexFactParser",
    "find_blocks",
    "response_text",
]
