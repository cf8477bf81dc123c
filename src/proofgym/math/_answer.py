"""Single-turn math: the prompt for a problem, and the parser that takes the final answer out of a completion."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import Claim
from proofgym.parsers import (LimitsConfig, ParseLimits, ParseResult, ParserKind, Rejection, parse_guarded,
                              problem_from_prompt, problem_marker, read_response)
from proofgym.math._problems import MathProblem, resolve_problems
from proofgym.math._verifier import balanced, math_claim

MATH_FORMAT_ERROR_KINDS = frozenset({"no_answer", "hedged_answer", "answer_too_long"})
"""``FormatError.kind`` values of :class:`MathAnswerParser` beyond the shared ones (``empty``, ``too_long``,
``bad_completion``)."""

#: The longest answer (characters inside the box, or after ``answer:``) the parser passes on.
MAX_ANSWER_CHARS = 1_000

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_LINE = re.compile(r"^[ \t>#*_]*(?:final[ \t]+answer|answer)[ \t]*[*_]*[ \t]*[:：][ \t]*(.*?)[ \t]*$",
                          re.IGNORECASE | re.MULTILINE)
# Spacing and sizing commands that change nothing about the value, removed before answers are compared.
_NOISE = re.compile(r"\\left|\\right|\\[,;:! ]|\\quad|\\qquad|\\displaystyle|\s+")
_DISJUNCTION = re.compile(r"\\lor\b|\\vee\b|(?<![A-Za-z\\])or(?![A-Za-z])", re.IGNORECASE)


def build_math_prompt(problem: MathProblem) -> str:
    """The single-turn prompt for ``problem``: its question, the answer format, and a ``<!-- problem: ID -->``
    marker from which :class:`MathAnswerParser` learns which problem an answer is for. Never the gold answer."""
    return (
        f"{problem.question.strip()}\n\n"
        "Reason step by step, then give the final answer once, as \\boxed{ANSWER} (a number, fraction, "
        "expression, set or interval; no units). Give one answer only: two different answers score as no answer.\n\n"
        f"{problem_marker(problem.id)}\n"
    )


@dataclass(frozen=True)
class MathAnswerParser:
    """Parses a completion's final answer into a claim for :class:`~proofgym.math.MathVerifier`.

    The answer is the content of the ``\\boxed{...}`` (or ``\\fbox{...}``; braces balanced, ``\\{`` and ``\\}``
    being literal braces), else of an ``answer:`` / ``final answer:`` line. No answer is ``no_answer``; two
    *different* answers (two boxes, or a box and an answer line, that differ beyond spacing) or one answer that
    is a disjunction (``3 \\lor 4``, ``3 or 4``) is ``hedged_answer``: a hedge is a format failure, never a
    chance at the reward. An answer over :data:`MAX_ANSWER_CHARS` is ``answer_too_long``.

    The gold answer comes from ``problems``: the one ``problem_id`` when set, else the problem the *prompt*'s
    ``<!-- problem: ID -->`` marker names (:func:`build_math_prompt`; never read from the completion). An unknown
    or missing problem still yields a claim, which the verifier answers ``INVALID``: a set-up error, not the
    policy's. ``parse`` never raises and is linear in the completion's length.
    """

    problems: Mapping[str, MathProblem]
    problem_id: str | None = None
    limits: ParseLimits = field(default_factory=lambda: ParseLimits(max_completion_chars=60_000))

    def parse(self, completion: Any, prompt: Any = None) -> ParseResult:
        """Parse ``completion`` (text or chat messages) answering ``prompt``; never raises."""
        return parse_guarded(lambda: self._claim(completion, prompt))

    def _claim(self, completion: Any, prompt: Any) -> Claim:
        answer = extract_answer(read_response(completion, prompt, self.limits))
        problem_id = self.problem_id if self.problem_id is not None else problem_from_prompt(prompt)
        problem = self.problems.get(problem_id) if problem_id is not None else None
        return math_claim(None if problem is None else problem.answer, answer)


def extract_answer(text: str) -> str:
    """The one final answer in ``text``; raises :class:`~proofgym.parsers.Rejection` (``no_answer``,
    ``hedged_answer``, ``answer_too_long``) otherwise."""
    boxed = _boxed_contents(text)
    lines = [value for value in (_unwrap(match.group(1)) for match in _ANSWER_LINE.finditer(text))
             if value and "\\boxed" not in value and "\\fbox" not in value]
    candidates = [value for value in (_unwrap(box) for box in boxed) if value] + lines
    if not candidates:
        raise Rejection("no_answer", "no final answer: expected \\boxed{...} or an 'answer:' line")
    distinct = {comparable(value) for value in candidates}
    if len(distinct) > 1:
        shown = ", ".join(repr(value[:40]) for value in list(dict.fromkeys(candidates))[:3])
        raise Rejection("hedged_answer", f"{len(distinct)} different final answers ({shown}); give exactly one")
    answer = candidates[-1]
    if len(answer) > MAX_ANSWER_CHARS:
        raise Rejection("answer_too_long", f"the answer has {len(answer)} characters, limit {MAX_ANSWER_CHARS}")
    if not balanced(answer):
        raise Rejection("no_answer", f"the answer {answer[:60]!r} has braces that do not balance")
    if _DISJUNCTION.search(_TEXT_COMMAND.sub(r" \1 ", answer)):
        raise Rejection("hedged_answer", f"the answer {answer[:60]!r} is a disjunction; give exactly one answer")
    return answer


_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")


def comparable(answer: str) -> str:
    """``answer`` without spacing and sizing commands, so ``\\frac{1}{2}`` and ``\\frac { 1 } { 2 }`` are one
    answer (what the hedge check compares; equivalence of different forms is the verifier's job)."""
    return _NOISE.sub("", answer).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").rstrip(".")


def _boxed_contents(text: str) -> list[str]:
    """The contents of the outermost ``\\boxed{...}`` groups whose braces close; one pass over ``text``."""
    contents = []
    position = 0
    while (match := _BOX.search(text, position)) is not None:
        depth, index = 1, match.end()
        while index < len(text) and depth:
            char = text[index]
            if char == "\\":
                index += 2  # an escaped character (\{ \} \\) never opens nor closes a group
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            index += 1
        if depth:
            break  # unclosed: nothing after it can close either
        contents.append(text[match.end() : index - 1])
        position = index
    return contents


def _unwrap(value: str) -> str:
    """An answer without the math delimiters, markdown emphasis and final full stop around it."""
    value = value.strip()
    for _ in range(3):
        stripped = value.strip().strip("*_").strip()
        for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
            if stripped.startswith(opening) and stripped.endswith(closing) and len(stripped) >= 2 * len(opening):
                stripped = stripped[len(opening) : len(stripped) - len(closing)].strip()
        stripped = stripped.rstrip(".").strip()
        if stripped == value:
            break
        value = stripped
    return value


class MathParserOptions(BaseModel):
    """Run-config options of the ``math`` parser kind: where problems (their gold answers) are looked up, which
    one is answered, and (optionally) the bounds on what is read (default: 60,000 characters)."""

    model_config = ConfigDict(extra="forbid")

    problems: str = Field("builtin", min_length=1, description="'builtin' or a JSON Lines file of "
                                                               "{id, question, answer} rows")
    problem_id: str | None = Field(None, min_length=1, description="the one problem answered (default: the "
                                                                   "prompt's <!-- problem: ID --> marker)")
    limits: LimitsConfig | None = None


def build_math_parser(options: MathParserOptions) -> MathAnswerParser:
    problems = resolve_problems(options.problems)
    if options.limits is None:
        return MathAnswerParser(problems, problem_id=options.problem_id)
    return MathAnswerParser(problems, problem_id=options.problem_id, limits=options.limits.limits())


#: The ``math`` parser kind, registered through the ``proofgym.parsers`` entry point (pyproject.toml).
MATH_PARSER = ParserKind(MathParserOptions, build_math_parser)
