"""The parser for line-based ``fact <name>: <value>`` / ``answer: <value>`` completions."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, cast

from proofgym.core import Claim
from proofgym.parsers._facts import check_answer, check_fact_name, check_scalar, normalise_decisions
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._protocol import Completion, Prompt
from proofgym.parsers._response import read_response
from proofgym.parsers._result import ParseResult, Rejection, parse_guarded

# Anchored at line starts, with no nested or adjacent overlapping quantifiers: linear per line.
# The value runs to the end of the line and is stripped afterwards (a trailing ``[ \t]*$`` after a
# lazy group would backtrack quadratically on long runs of spaces).
DEFAULT_FACT_PATTERN = r"^[ \t]*fact[ \t]+(?P<name>[^\s:]+)[ \t]*:(?P<value>[^\n]*)"
DEFAULT_ANSWER_PATTERN = r"^[ \t]*answer[ \t]*:(?P<value>[^\n]*)"

_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class RegexFactParser:
    """Parses line-based responses: ``fact <name>: <value>`` lines and one ``answer: <value>`` line.

    Fact values are read as JSON-ish scalars: ``true``/``false`` -> bool, ``null``/``none`` -> None,
    integers, finite floats, a double-quoted JSON string -> its text, anything else -> the text
    itself. The answer is text (a double-quoted answer is unquoted), normalised with
    ``strip().casefold()`` and checked against ``decisions`` when given. No answer line is
    ``missing_answer``; several are ``multiple_decision_blocks`` (a hedge); a fact named twice is
    ``bad_facts``. Every matching line counts, wherever it is. ``Claim.reasoning`` is ``None``.

    ``fact_pattern`` needs named groups ``name`` and ``value``, ``answer_pattern`` a group
    ``value``; strings are compiled with ``re.MULTILINE | re.IGNORECASE``. ``parse`` never raises.
    """

    decisions: Collection[str] | None = None
    limits: ParseLimits = field(default_factory=ParseLimits)
    fact_pattern: str | re.Pattern[str] = DEFAULT_FACT_PATTERN
    answer_pattern: str | re.Pattern[str] = DEFAULT_ANSWER_PATTERN

    def __post_init__(self) -> None:
        if not isinstance(self.limits, ParseLimits):
            raise TypeError("limits must be a ParseLimits")
        object.__setattr__(self, "decisions", normalise_decisions(self.decisions))
        object.__setattr__(self, "fact_pattern", _compile(self.fact_pattern, ("name", "value")))
        object.__setattr__(self, "answer_pattern", _compile(self.answer_pattern, ("value",)))

    def parse(self, completion: Completion, prompt: Prompt | None = None) -> ParseResult:
        """Parse ``completion`` (text or chat messages) into a claim; ``prompt`` is never parsed."""
        return parse_guarded(lambda: self._claim(completion, prompt))

    def _claim(self, completion: Any, prompt: Any) -> Claim:
        text = read_response(completion, prompt, self.limits)
        answers = [match.group("value") or "" for match in cast(re.Pattern[str], self.answer_pattern).finditer(text)]
        if not answers:
            raise Rejection("missing_answer", "no 'answer:' line")
        if len(answers) > 1:
            raise Rejection("multiple_decision_blocks", f"{len(answers)} 'answer:' lines; exactly one is allowed")
        decision = check_answer(_unquote(answers[0].strip()), self.decisions, self.limits)
        facts: dict[str, Any] = {}
        for match in cast(re.Pattern[str], self.fact_pattern).finditer(text):
            name = match.group("name")
            check_fact_name(name)
            if name in facts:
                raise Rejection("bad_facts", f"fact {name!r} is given twice")
            if len(facts) == self.limits.max_facts:
                raise Rejection("too_many_facts", f"more than {self.limits.max_facts} facts")
            facts[name] = check_scalar(name, self._value(name, match.group("value") or ""), self.limits)
        return Claim(decision=decision, facts=facts)

    def _value(self, name: str, raw: str) -> Any:
        text = raw.strip()
        if not text:
            raise Rejection("bad_facts", f"fact {name!r} has no value")
        if len(text) > self.limits.max_string_chars:
            raise Rejection(
                "bad_facts", f"fact {name!r} has {len(text)} characters, limit {self.limits.max_string_chars}"
            )
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        if lowered in ("null", "none"):
            return None
        if _INT.fullmatch(text):
            try:
                return int(text)
            except ValueError:  # more digits than Python converts; keep the text
                return text
        if _FLOAT.fullmatch(text):
            number = float(text)
            if not math.isfinite(number):
                raise Rejection("bad_facts", f"fact {name!r} is not a finite number")
            return number
        return _unquote(text)


def _unquote(text: str) -> str:
    """The text of a double-quoted JSON string, or ``text`` unchanged."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, str):
            return value
    return text


def _compile(pattern: Any, groups: tuple[str, ...]) -> re.Pattern[str]:
    compiled = re.compile(pattern, re.MULTILINE | re.IGNORECASE) if isinstance(pattern, str) else pattern
    if (
        not isinstance(compiled, re.Pattern)
        or not isinstance(compiled.pattern, str)
        or not set(groups) <= set(compiled.groupindex)
    ):
        raise ValueError(f"pattern {pattern!r} must be a text pattern with the named groups {groups}")
    return compiled
