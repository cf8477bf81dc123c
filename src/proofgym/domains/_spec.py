"""What a task asks of the model: its decisions, the facts to report, and the output format keys."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from proofgym.parsers import JSONBlockParser, ParseLimits


@dataclass(frozen=True, slots=True)
class DomainSpec:
    """A classification domain, as the model sees it and as its completions are parsed.

    ``description`` is the paragraph the model reads; ``decisions`` the allowed answers; ``facts``
    maps each fact name to a one-line description including its type (``"integer, age in years"``).
    ``answer_key``, ``facts_key``, ``tag`` and ``reasoning_tag`` name the parts of the output format.
    Construction fails (``ValueError``) unless every decision, with every fact, parses with
    :meth:`parser`, so a spec can never describe answers its own parser rejects.
    """

    name: str
    description: str
    decisions: tuple[str, ...]
    facts: Mapping[str, str] = field(hash=False)
    answer_key: str = "classification"
    facts_key: str = "facts"
    tag: str = "decision"
    reasoning_tag: str = "reasoning"

    def __post_init__(self) -> None:
        object.__setattr__(self, "decisions", tuple(self.decisions))
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))
        if not self.name or not self.description.strip():
            raise ValueError("a DomainSpec needs a name and a description")
        if not self.decisions:
            raise ValueError(f"DomainSpec {self.name!r} lists no decisions")
        parser = self.parser()  # rejects bad tags and keys
        assert parser.decisions is not None  # a parser given decisions keeps them
        if len(parser.decisions) != len(self.decisions):
            raise ValueError(f"DomainSpec {self.name!r} has decisions that differ only in case or spacing")
        facts = dict.fromkeys(self.facts, 0)
        for decision in self.decisions:
            body = json.dumps({self.answer_key: decision, self.facts_key: facts})
            result = parser.parse(f"<{self.tag}>{body}</{self.tag}>")
            if not result.ok:
                assert result.error is not None  # a result that is not ok says why
                raise ValueError(
                    f"DomainSpec {self.name!r}: an answer {decision!r} would not parse: {result.error.message}"
                )

    def parser(self, *, require_facts: bool = False, limits: ParseLimits | None = None) -> JSONBlockParser:
        """The :class:`~proofgym.parsers.JSONBlockParser` for completions answering this spec."""
        return JSONBlockParser(
            answer_key=self.answer_key,
            facts_key=self.facts_key,
            tag=self.tag,
            reasoning_tag=self.reasoning_tag,
            decisions=self.decisions,
            require_facts=require_facts,
            limits=limits or ParseLimits(),
        )
