"""The parser for ``<reasoning>...</reasoning><decision>{JSON}</decision>`` completions."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from proofgym.core import Claim, model_text
from proofgym.parsers._blocks import find_blocks
from proofgym.parsers._facts import check_answer, check_facts, normalise_decisions
from proofgym.parsers._json import decode_json
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._protocol import Completion, Prompt
from proofgym.parsers._response import read_response
from proofgym.parsers._result import ParseResult, Rejection, parse_guarded

_TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")


@dataclass(frozen=True, slots=True)
class JSONBlockParser:
    """Parses a response made of reasoning and exactly one JSON decision block.

    The expected response is ``<reasoning>...</reasoning>`` then
    ``<decision>{"classification": "permit", "facts": {"age": 34}}</decision>``. Every
    ``<decision>`` block in the response counts, including one inside the reasoning: zero blocks is
    ``no_decision_block``, two or more (a hedge, even with the same answer twice) is
    ``multiple_decision_blocks``; a block without its closing tag does not count.

    The answer (under ``answer_key``) must be a string; it is normalised with
    ``strip().casefold()`` and, when ``decisions`` is given, must be one of them (normalised the
    same way; the field holds the normalised set). The facts (under ``facts_key``) must be an object
    of identifier -> JSON scalar or ``{"value": scalar, "confidence": 0..1}``; without the key the
    facts are empty, unless ``require_facts``. Other keys of the object are ignored. The first
    ``reasoning_tag`` block (``None``: no capture) becomes ``Claim.reasoning`` and never affects
    anything else. ``parse`` never raises.
    """

    answer_key: str = "classification"
    facts_key: str = "facts"
    tag: str = "decision"
    reasoning_tag: str | None = "reasoning"
    decisions: Collection[str] | None = None
    require_facts: bool = False
    limits: ParseLimits = field(default_factory=ParseLimits)

    def __post_init__(self) -> None:
        for name in ("tag", "reasoning_tag"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, str) and _TAG_NAME.fullmatch(value)):
                raise ValueError(f"{name} must be a tag name such as 'decision', got {value!r}")
        if self.tag == self.reasoning_tag:
            raise ValueError("tag and reasoning_tag must differ")
        if not (
            isinstance(self.answer_key, str) and isinstance(self.facts_key, str) and self.answer_key != self.facts_key
        ):
            raise ValueError("answer_key and facts_key must be two different strings")
        if not isinstance(self.limits, ParseLimits):
            raise TypeError("limits must be a ParseLimits")
        object.__setattr__(self, "decisions", normalise_decisions(self.decisions))

    def parse(self, completion: Completion, prompt: Prompt | None = None) -> ParseResult:
        """Parse ``completion`` (text or chat messages) into a claim; ``prompt`` is never parsed."""
        return parse_guarded(lambda: self._claim(completion, prompt))

    def _claim(self, completion: Any, prompt: Any) -> Claim:
        text = read_response(completion, prompt, self.limits)
        blocks = find_blocks(text, self.tag)
        if not blocks:
            raise Rejection("no_decision_block", f"no complete <{self.tag}>...</{self.tag}> block")
        if len(blocks) > 1:
            raise Rejection("multiple_decision_blocks", f"{len(blocks)} <{self.tag}> blocks; exactly one is allowed")
        decoded = decode_json(blocks[0].strip(), self.limits)
        if not isinstance(decoded, dict):
            raise Rejection(
                "not_an_object", f"the <{self.tag}> block must hold a JSON object, got {type(decoded).__name__}"
            )
        if self.answer_key not in decoded:
            raise Rejection("missing_answer", f"the <{self.tag}> object has no {self.answer_key!r} key")
        decision = check_answer(decoded[self.answer_key], self.decisions, self.limits)
        if self.facts_key in decoded:
            facts = check_facts(decoded[self.facts_key], self.limits)
        elif self.require_facts:
            raise Rejection("bad_facts", f"the <{self.tag}> object has no {self.facts_key!r} key")
        else:
            facts = {}
        return Claim(decision=decision, facts=facts, reasoning=self._reasoning(text))

    def _reasoning(self, text: str) -> str | None:
        if self.reasoning_tag is None:
            return None
        blocks = find_blocks(text, self.reasoning_tag)
        # The response is already capped at max_completion_chars, so the reasoning is too.
        return model_text(blocks[0].strip()) if blocks else None
