"""The kernel's report: the verdict's evidence, in the hosted platform's QueryExplanation shape.

Everything that does not depend on the query (each rule's trace entry, fired or not, and its explanation template
split into literal text and fact names) is prepared once per rulebook: a report costs one render per fact the
templates name, one dict copy per rule and a concatenation per explanation that names facts.
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
        # Per rule: its entry when it did not fire and when it did, each with every key (a copy then needs no
        # resize) and the explanation when it names no fact; else the explanation's pieces (see _pieces).
        entries = []
        for name, kind, action, required, explain in rules:
            pieces = _pieces(explain)
            text = pieces[0] if len(pieces) == 1 else ""
            entry = {"rule_id": name, "rule_name": name, "rule_type": kind, "action_type": action,
                     "required": required, "fired": False, "explanation": text}
            entries.append((entry, {**entry, "fired": True}, None if len(pieces) == 1 else pieces))
        self._entries = tuple(entries)
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

        texts = {}
        for name in self._template_facts:
            texts[name] = render(facts.get(name))  # an absent fact renders as "unknown"
        rules = []
        for (idle, fired_entry, pieces), did_fire in zip(self._entries, fired):
            entry = (fired_entry if did_fire else idle).copy()  # the cheapest way to a fresh 7-key dict
            if pieces is not None:
                entry["explanation"] = _fill(pieces, texts)
            rules.append(entry)

        counts = f"{n_fired} rule(s) fired, {n_derived} fact(s) derived from {n_inputs} input fact(s)."
        if rejected_by_checker:
            assert problems  # rejected_by_checker: there are some
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
            "checker_problems": [] if problems is None else problems,
        }


def _pieces(template: str) -> tuple[str, ...]:
    """A template (which the loader has checked parses) as (text, fact, text, ..., fact, text): odd places name the
    facts to fill in; a template that names no fact is its one text."""
    pieces = [""]
    for literal, name in parse_template(template):
        pieces[-1] += literal
        if name is not None:
            pieces += [name, ""]
    return tuple(pieces)


def _fill(pieces: tuple[str, ...], texts: dict[str, str]) -> str:
    if len(pieces) == 3:  # the usual one fact: two concatenations
        return pieces[0] + texts[pieces[1]] + pieces[2]
    parts = list(pieces)
    for i in range(1, len(parts), 2):
        parts[i] = texts[parts[i]]
    return "".join(parts)


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
