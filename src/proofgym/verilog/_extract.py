"""Single-turn Verilog: the prompt for a problem, and the parser that takes the design out of an answer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import Claim
from proofgym.parsers import (LimitsConfig, ParseLimits, ParseResult, ParserKind, Rejection, parse_guarded,
                              problem_from_prompt, problem_marker, read_response)
from proofgym.verilog._problem import Problem
from proofgym.verilog._problem_loader import interface
from proofgym.verilog._verifier import canonical_design, design_claim

VERILOG_FORMAT_ERROR_KINDS = frozenset({"no_design", "multiple_designs"})
"""``FormatError.kind`` values of :class:`VerilogParser` beyond the shared ones (``empty``, ``too_long``,
``bad_completion``)."""

_FENCE = "```"
_TOP_HEADER = re.compile(r"\bmodule\s+TopModule\s*(?:#\s*\(|\(|;)")
_ENDMODULE = re.compile(r"\bendmodule\b")


def build_verilog_prompt(problem: Problem) -> str:
    """The single-turn prompt for ``problem``: its spec, the port interface, the answer format, and a
    ``<!-- problem: ID -->`` marker from which :class:`VerilogParser` learns which problem an answer is for.
    Never the reference nor the testbench."""
    return (
        f"{problem.spec.strip()}\n\n"
        f"The module's interface:\n```verilog\n{interface(problem)}\n```\n\n"
        "Answer with exactly one ```verilog fenced block that defines `module TopModule` (helper modules may "
        "go in the same block). Write a design for Icarus Verilog (-g2012), not a testbench: no `include, and "
        "no system tasks that print, touch files or control the simulation ($display, $fopen, $finish, ...).\n\n"
        f"{problem_marker(problem.id)}\n"
    )


@dataclass(frozen=True)
class VerilogParser:
    """Parses an answer holding one ``module TopModule ... endmodule`` into a claim for :class:`VerilogVerifier`.

    The design is the one fenced code block (any language tag) that defines ``TopModule``, whole, so
    helper modules in it come along; without such a block, the text from the one ``module TopModule``
    header to the next ``endmodule``. No definition is ``no_design``, two or more (in one block or
    several) ``multiple_designs``: a hedge is a format failure.

    Which problem the answer is for: ``problem_id`` when set (one parser per problem), else the
    ``<!-- problem: ID -->`` marker that :func:`build_verilog_prompt` puts in the *prompt* (the last
    one; never read from the completion, which the policy wrote). An unknown or missing problem still
    yields a claim, which the verifier answers ``INVALID``: that is a set-up error, not the policy's.
    ``parse`` never raises and is linear in the completion's length.
    """

    problems: Mapping[str, Problem]
    problem_id: str | None = None
    limits: ParseLimits = field(default_factory=lambda: ParseLimits(max_completion_chars=60_000))

    def parse(self, completion: Any, prompt: Any = None) -> ParseResult:
        """Parse ``completion`` (text or chat messages) answering ``prompt``; never raises."""
        return parse_guarded(lambda: self._claim(completion, prompt))

    def _claim(self, completion: Any, prompt: Any) -> Claim:
        design = _extract_design(read_response(completion, prompt, self.limits))
        problem_id = self.problem_id if self.problem_id is not None else problem_from_prompt(prompt)
        problem = self.problems.get(problem_id) if problem_id is not None else None
        if problem is None:
            return Claim(payload={"problem": problem_id, "problem_hash": None, "design": canonical_design(design)})
        return design_claim(problem, design)


def _extract_design(text: str) -> str:
    blocks = [block for block in _fenced_blocks(text) if _TOP_HEADER.search(block)]
    if blocks:
        count = sum(len(_TOP_HEADER.findall(block)) for block in blocks)
        if count > 1:
            raise Rejection("multiple_designs", f"{count} definitions of TopModule; exactly one is allowed")
        design = blocks[0]
        if not _ENDMODULE.search(design, _TOP_HEADER.search(design).end()):  # type: ignore[union-attr]
            raise Rejection("no_design", "the TopModule definition has no endmodule")
        return design
    headers = list(_TOP_HEADER.finditer(text))
    if not headers:
        raise Rejection("no_design", "no `module TopModule` definition (in a ```verilog block or in the text)")
    if len(headers) > 1:
        raise Rejection("multiple_designs", f"{len(headers)} definitions of TopModule; exactly one is allowed")
    end = _ENDMODULE.search(text, headers[0].end())
    if end is None:
        raise Rejection("no_design", "the TopModule definition has no endmodule")
    return text[headers[0].start() : end.end()]


def _fenced_blocks(text: str) -> list[str]:
    """Contents of the ``` fenced blocks, fences paired in order (an unclosed last fence is ignored)."""
    blocks: list[str] = []
    position = 0
    while (opening := text.find(_FENCE, position)) >= 0:
        body = text.find("\n", opening)
        closing = text.find(_FENCE, body) if body >= 0 else -1
        if closing < 0:
            break
        blocks.append(text[body + 1 : closing])
        position = closing + len(_FENCE)
    return blocks


class VerilogParserOptions(BaseModel):
    """Run-config options of the ``verilog`` parser kind: where problems are looked up, which one is answered, and
    (optionally) the bounds on what is read (default: :class:`VerilogParser`'s 60,000 characters)."""

    model_config = ConfigDict(extra="forbid")

    problems: str = Field("builtin", min_length=1,
                          description="'builtin' or a VerilogEval folder, to look problems up in")
    problem_id: str | None = Field(None, description="the one problem answered (default: the prompt's "
                                                     "<!-- problem: ID --> marker)")
    limits: LimitsConfig | None = None


def build_verilog_parser(options: VerilogParserOptions) -> VerilogParser:
    from proofgym.verilog import builtin_problems, load_verilogeval

    problems = (builtin_problems() if options.problems == "builtin"
                else {p.id: p for p in load_verilogeval(options.problems)})
    if options.limits is None:
        return VerilogParser(problems, problem_id=options.problem_id)
    return VerilogParser(problems, problem_id=options.problem_id, limits=options.limits.limits())


#: The ``verilog`` parser kind, registered through the ``proofgym.parsers`` entry point (pyproject.toml).
VERILOG_PARSER = ParserKind(VerilogParserOptions, build_verilog_parser)
