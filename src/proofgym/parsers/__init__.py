"""Parsers: turn a completion into a :class:`~proofgym.core.Claim`, or say why it is malformed.

A parser never raises: every malformed, oversized or hostile completion becomes a
:class:`FormatError` with a machine-readable ``kind``. The prompt is never parsed as the answer.
Parser kinds are registered by name (``json_block`` and ``regex`` built in; others through the ``proofgym.parsers``
entry-point group), for run configs' ``parser: {kind: ...}``.
"""

from proofgym.parsers._blocks import find_blocks
from proofgym.parsers._json_block import JSONBlockParser
from proofgym.parsers._kinds import (
    PARSER_KINDS,
    DecisionParserOptions,
    LimitsConfig,
    ParserKind,
    ParserOptionsError,
    build_parser,
    parser_kind,
    parser_kinds,
    register_parser,
    validate_parser_options,
)
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._marker import problem_from_prompt, problem_marker
from proofgym.parsers._protocol import Completion, CompletionParser, Prompt
from proofgym.parsers._regex_fact import RegexFactParser
from proofgym.parsers._response import read_response, response_text
from proofgym.parsers._result import FORMAT_ERROR_KINDS, FormatError, ParseResult, Rejection, parse_guarded

__all__ = [
    "FORMAT_ERROR_KINDS",
    "PARSER_KINDS",
    "Completion",
    "CompletionParser",
    "DecisionParserOptions",
    "FormatError",
    "JSONBlockParser",
    "LimitsConfig",
    "ParseLimits",
    "ParseResult",
    "ParserKind",
    "ParserOptionsError",
    "Prompt",
    "RegexFactParser",
    "Rejection",
    "build_parser",
    "find_blocks",
    "parse_guarded",
    "parser_kind",
    "parser_kinds",
    "problem_from_prompt",
    "problem_marker",
    "read_response",
    "register_parser",
    "response_text",
    "validate_parser_options",
]
