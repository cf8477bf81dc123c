"""The kernel's report: the verdict's evidence, in the hosted platform's QueryExplanation shape.

Everything that does not depend on the query (each rule's trace entry, its explanation template turned into a
``%(fact)s`` format) is prepared once per rulebook: a report costs one render per fact the templates name, one
``%`` format and one dict literal per rule.
"""

from __future__ import annotations

from typing import Any, Sequence

from proofgym.core import RejectedFact
from proofgym.rules._ast import Rulebook
from proofgym.rules._values import parse_template, render

_NAMES_SHOWN = 10


class Reporter:
    """Builds the reports of one rulebook."""

    def __init__(self, rulebook: Rulebook) -> None:
        rules = [(rule.name, "derive", "derive", False, rule.explain) for rule in rulebook.derive_rules]
        rules += [(rule.name, "constraint", "require", True, rule.explain) for rule in rulebook.constraints]
        rules += [(rule.name, "decision", "decide", False, rule.explain) for rule in rulebook.decision_rules]
        # (the entry's fixed keys, its explanation as a %(fact)s format or a plain string, whether to format)
        self._entries = tuple(
            (
                {"rule_id": name, "rule_name": name, "rule_type": kind, "action_type": action, "required": required},
                *_format(explain),
            )
            for name, kind, action, required, explain in rules
        )
        self._template_facts = tuple(dict.fromkeys(
            name for *_, explain in rules for _, name in parse_template(explain) if name is not None
        ))

    def abstained(
        self, accepted: dict[str, Any], rejected: Sequence[RejectedFact], confidences: dict[str, float]
    ) -> dict[str, Any]:
        """The report of a query the fact gate stopped: no proof is run."""
        names = [r.field for r in rejected]
        shown = ", ".join(names[:_NAMES_SHOWN]) + (", ..." if len(names) > _NAMES_SHOWN else "")
        return {
            "decision": None,
            "status": "abstain",
            "proof_checked": False,
            "proof_summary": f"No decision: the fact gate rejected {len(names)} fact(s): {shown}.",
            "confidence": {
                "overall": min(confidences.values()) if confidences else 1.0,
                "symbolic": 0.0,
                "neural": None,
            },
            "certified_fact_summary": {"accepted": len(accepted), "rejected": len(names), "derived": 0},
            "rejected_facts": [r.to_dict() for r in rejected],
            "symbolic_trace": {"rules_evaluated": 0, "rules_fired": 0, "rules": []},
            "proof": None,
            "deciding_rules": [],
            "checker_problems": [],
        }

    def evaluated(
        self,
        proof: dict[str, Any],
        fired: list[bool],
        confidences: dict[str, float],
        problems: list[str] | None,
    ) -> dict[str, Any]:
        """The report of an evaluated query; ``problems`` is what the checker found (None: not checked)."""
        facts = proof["facts"]
        outcome = proof["decision"]
        checked = problems == []
        rejected_by_checker = bool(problems)
        status = "indeterminate" if rejected_by_checker else outcome["status"]
        decision = None if rejected_by_checker else outcome["decision"]
        n_inputs = len(proof["inputs"])
        n_derived = len(facts) - n_inputs
        n_fired = sum(fired)

        names = self._template_facts
        texts = dict(zip(names, map(render, map(facts.get, names))))  # an absent fact renders as "unknown"
        rules = []
        for (fixed, explanation, formatted), did_fire in zip(self._entries, fired):
            entry = fixed.copy()  # the cheapest way to a fresh 7-key dict
            entry["fired"] = did_fire
            entry["explanation"] = explanation % texts if formatted else explanation
            rules.append(entry)

        counts = f"{n_fired} rule(s) fired, {n_derived} fact(s) derived from {n_inputs} input fact(s)."
        if rejected_by_checker:
            summary = (f"Proof rejected by the independent checker ({len(problems)} problem(s): {problems[0]});"
                       f" no decision certified. {counts}")
        elif status == "decided":
            how = " (the deny posture's default: no decision rule decided)" if outcome["by_default"] else ""
            verb = "independently certified by the proof checker" if checked else "reached; its proof was not checked"
            summary = f"Decision '{decision}'{how} {verb}: {counts}"
        else:
            summary = f"No decision: {_why_indeterminate(proof)}. {counts}"
        return {
            "decision": decision,
            "status": status,
            "proof_checked": checked,
            "proof_summary": summary,
            "confidence": {
                "overall": min(confidences.values()) if confidences else 1.0,
                "symbolic": 1.0 if checked else 0.0,
                "neural": None,
            },
            "certified_fact_summary": {"accepted": n_inputs, "rejected": 0, "derived": n_derived},
            "rejected_facts": [],
            "symbolic_trace": {"rules_evaluated": len(rules), "rules_fired": n_fired, "rules": rules},
            "proof": proof,
            "deciding_rules": [] if rejected_by_checker else list(outcome["deciding_rules"]),
            "checker_problems": problems or [],
        }


def _format(template: str) -> tuple[str, bool]:
    """A template as a ``%(fact)s`` format, or as plain text when it names no fact; and which of the two it is
    (the loader has checked that it parses)."""
    pieces = parse_template(template)
    if all(name is None for _, name in pieces):
        return "".join(literal for literal, _ in pieces), False
    text = "".join(literal.replace("%", "%%") + ("" if name is None else f"%({name})s") for literal, name in pieces)
    return text, True


def _why_indeterminate(proof: dict[str, Any]) -> str:
    seen: dict[str, Any] = {}
    conflicts: dict[str, None] = {}
    for firing in proof["firings"]:
        fact, value = firing["conclusion"]["fact"], firing["conclusion"]["value"]
        if seen.setdefault(fact, value) != value:
            conflicts[fact] = None
    if conflicts:
        return f"rules derived conflicting values for {', '.join(conflicts)}"
    return "no decision rule fired without being blocked, and the posture is abstain"
