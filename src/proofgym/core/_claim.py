"""What a completion asserts, after parsing: the thing a verifier checks."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from proofgym.core._text import text_bytes

# One encoder for every claim: json.dumps with options builds a new encoder per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


@dataclass(frozen=True, slots=True)
class Claim:
    """A parsed completion.

    ``decision`` is the model's answer (normalised by the parser), ``facts`` the facts it asserts
    (JSON scalars, or ``{"value": ..., "confidence": ...}`` objects), ``payload`` any other
    verifiable content (a Verilog design, a math answer), ``reasoning`` the free text the model gave.
    The reasoning never enters the canonical form, so completions that differ only in their
    reasoning share one verification.
    """

    decision: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)
    payload: Mapping[str, Any] = field(default_factory=dict)
    reasoning: str | None = None

    def canonical(self, *, include_decision: bool = True) -> str:
        """A stable JSON text of everything a verifier may read (sorted keys, no reasoning)."""
        body: dict[str, Any] = {"facts": self.facts, "payload": self.payload}
        if include_decision:
            body["decision"] = self.decision
        return _CANONICAL.encode(body)

    def key(self, *, include_decision: bool = True) -> str:
        """SHA-256 hex digest of :meth:`canonical`."""
        return hashlib.sha256(text_bytes(self.canonical(include_decision=include_decision))).hexdigest()

    def fact_value(self, name: str) -> Any:
        """The value of an asserted fact, unwrapping ``{"value": ..., "confidence": ...}`` objects."""
        raw = self.facts[name]
        if isinstance(raw, Mapping) and "value" in raw:
            return raw["value"]
        return raw
