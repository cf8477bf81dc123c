"""Grant eligibility, written as a plain Python verifier.

The rules of the reference system's demo domain: permit iff the applicant is an adult, earns at most
30,000 a year, is a resident and holds no active grant; deny otherwise. A fact gate rejects unknown,
mistyped, out-of-range and low-confidence facts, and a claim with a rejected or missing fact is refuted
(fail-closed): no decision is certified from facts the gate refused.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from proofgym.core import Claim, Outcome, RejectedFact, Verdict

DECISIONS = ("permit", "deny")
MIN_CONFIDENCE = 0.8
INCOME_THRESHOLD = 30_000


def _number(lo: float, hi: float, integer: bool) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected {'an integer' if integer else 'a number'}, got {type(value).__name__}"
        if integer and not (isinstance(value, int) or float(value).is_integer()):
            return "expected an integer"
        if not math.isfinite(value) or not lo <= value <= hi:
            return f"out of range [{lo:g}, {hi:g}]"
        return None

    return check


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected a boolean, got {type(value).__name__}"


SCHEMA: dict[str, Callable[[Any], str | None]] = {
    "age": _number(0, 130, integer=True),
    "annual_income": _number(0, 100_000_000, integer=False),
    "resident": _boolean,
    "has_active_grant": _boolean,
}

# (rule name, explanation, test) in evaluation order; every rule must hold for a permit.
RULES: tuple[tuple[str, str, Callable[[Mapping[str, Any]], bool]], ...] = (
    ("is_adult", "the applicant is at least 18 years old", lambda f: f["age"] >= 18),
    ("income_within_threshold", f"annual income is at most {INCOME_THRESHOLD}",
     lambda f: f["annual_income"] <= INCOME_THRESHOLD),
    ("is_resident", "the applicant is a resident", lambda f: f["resident"]),
    ("no_active_grant", "the applicant holds no active grant", lambda f: not f["has_active_grant"]),
)


def gate(facts: Mapping[str, Any]) -> tuple[dict[str, Any], list[RejectedFact]]:
    """Split asserted facts into accepted values and rejected facts with reasons."""
    accepted: dict[str, Any] = {}
    rejected: list[RejectedFact] = []
    for name, raw in facts.items():
        value, confidence = raw, 1.0
        if isinstance(raw, Mapping):
            value, confidence = raw.get("value"), raw.get("confidence", 1.0)
        reasons = []
        if name not in SCHEMA:
            reasons.append("unknown fact")
        else:
            problem = SCHEMA[name](value)
            if problem:
                reasons.append(problem)
        if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not (
            MIN_CONFIDENCE <= confidence <= 1
        ):
            reasons.append(f"confidence below {MIN_CONFIDENCE}")
        if reasons:
            rejected.append(RejectedFact(name, value, tuple(reasons)))
        else:
            accepted[name] = value
    for name in SCHEMA:
        if name not in facts:
            rejected.append(RejectedFact(name, None, ("required fact missing",)))
    return accepted, rejected


def verify(claim: Claim) -> Verdict:
    """Certify the decision the rules give on the claim's facts, or refute the claim."""
    accepted, rejected = gate(claim.facts)
    if rejected:
        return Verdict(
            Outcome.REFUTED,
            rejected_facts=tuple(rejected),
            reason=f"fact gate rejected {len(rejected)} fact(s): {', '.join(r.field for r in rejected)}",
            evidence={"accepted_facts": accepted},
        )
    trace = [{"rule": name, "fired": bool(test(accepted)), "explanation": text} for name, text, test in RULES]
    failed = [r["rule"] for r in trace if not r["fired"]]
    decision = "deny" if failed else "permit"
    fired = len(trace) - len(failed)
    return Verdict(
        Outcome.CERTIFIED,
        decision=decision,
        evidence={
            "inputs": accepted,
            "rules": trace,
            "rules_evaluated": len(trace),
            "rules_fired": fired,
            "deciding_rules": failed or [r["rule"] for r in trace],
        },
        reason=f"{decision}: " + ("all rules hold" if not failed else "failed " + ", ".join(map(str, failed))),
    )
