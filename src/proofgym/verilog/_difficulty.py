"""Each problem's difficulty and split, measured from its reference design (the same answer on every machine).

Difficulty (:func:`problem_difficulty`), from the reference with its comments removed:

- ``easy``: combinational (no ``posedge`` / ``negedge``) and at most 10 statement lines in the module body;
- ``hard``: sequential and a state machine (a ``case`` on a signal whose name contains ``state``) or at least 20
  statement lines;
- ``medium``: the rest (sequential without a state machine under 20 lines, or combinational over 10 lines).

A statement line is a non-blank line of the body (after the port list) that is more than ``begin`` / ``end`` /
``endcase`` / ``else`` / ``endmodule``. Built-in problems: 16 easy, 16 medium, 6 hard; VerilogEval v2
spec-to-rtl: 72 easy, 53 medium, 31 hard.

Split (:func:`problem_splits`), by problem, so that no problem is in two splits: the problems of each difficulty
in id order, the ``j``-th is in ``test`` when ``j mod 10 == 2``, in ``val`` when ``j mod 10 == 7`` and in
``train`` otherwise. Stratified, so each split has every difficulty in about the same proportion (a level with
3 or more problems has a test problem, one with 8 or more a val problem), and a problem's split does not depend
on the difficulty an environment is restricted to.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Literal

from proofgym.envs import DIFFICULTIES as DIFFICULTIES  # re-exported by proofgym.verilog
from proofgym.verilog._problem import Problem
from proofgym.verilog._problem_loader import header_end

Difficulty = Literal["easy", "medium", "hard"]  # the values of proofgym.envs.DIFFICULTIES

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_HEADER = re.compile(r"\bmodule\s+RefModule\b")
_CLOCK_EDGE = re.compile(r"\b(?:posedge|negedge)\b")
_STATE_CASE = re.compile(r"\bcase[zx]?\s*\(\s*\w*state\w*\s*\)", re.I)
_STRUCTURE = re.compile(r"(?:end|begin|endcase|endmodule|else|end\s+else(?:\s+begin)?|endfunction|endgenerate)\s*;?")
_EASY_MAX_LINES = 10
_HARD_MIN_LINES = 20


def problem_difficulty(problem: Problem) -> str:
    """``easy``, ``medium`` or ``hard``, by the rule in this module's docstring (cached per reference)."""
    return _difficulty(problem.reference)


def problem_splits(problems: Iterable[Problem]) -> dict[str, str]:
    """Each problem's split (``train`` / ``val`` / ``test``) by id, by the rule in this module's docstring."""
    by_level: dict[str, list[str]] = {level: [] for level in DIFFICULTIES}
    for problem in problems:
        by_level[problem_difficulty(problem)].append(problem.id)
    splits: dict[str, str] = {}
    for ids in by_level.values():
        for position, problem_id in enumerate(sorted(ids)):
            rest = position % 10
            splits[problem_id] = "test" if rest == 2 else "val" if rest == 7 else "train"
    return splits


@functools.lru_cache(maxsize=4096)
def _difficulty(reference: str) -> str:
    text = _COMMENT.sub("", reference)
    body = text[_body_start(text):]
    lines = [line.strip() for line in body.splitlines()]
    statements = sum(1 for line in lines if line and not _STRUCTURE.fullmatch(line))
    sequential = _CLOCK_EDGE.search(text) is not None
    if not sequential and statements <= _EASY_MAX_LINES:
        return "easy"
    if sequential and (_STATE_CASE.search(text) is not None or statements >= _HARD_MIN_LINES):
        return "hard"
    return "medium"


def _body_start(text: str) -> int:
    """Where the module body starts: after the ``;`` that ends ``module RefModule (...)`` (0 without a header)."""
    found = _HEADER.search(text)
    if found is None:
        return 0
    end = header_end(text, found.end())
    return len(text) if end is None else end
