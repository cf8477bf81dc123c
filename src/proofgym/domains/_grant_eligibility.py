"""Community grant eligibility: permit iff adult, income at most 30,000, resident, no active grant."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from proofgym.domains._domain import Domain, Record, balanced_records
from proofgym.domains._spec import DomainSpec

NAME = "grant_eligibility"
INCOME_THRESHOLD = 30_000

# Branch -> the decision it leads to, in the order the deny reasons are checked: a record with
# several reasons carries the first one's label (the rulebook's deciding rule is that reason's too).
BRANCHES = {
    "permit": "permit",
    "minor": "deny",
    "income_over_threshold": "deny",
    "non_resident": "deny",
    "active_grant": "deny",
}
_DENY_REASONS = ("minor", "income_over_threshold", "non_resident", "active_grant")

SPEC = DomainSpec(
    name=NAME,
    description=(
        "You review applications for a community grant. The grant is permitted only when the applicant "
        "is at least 18 years old, has an annual income of at most 30,000, is a resident, and does not "
        "already hold an active grant; if any of these fails, the application is denied. Read the "
        "applicant's record, check each requirement, and decide."
    ),
    decisions=("permit", "deny"),
    facts={
        "age": "integer, the applicant's age in whole years",
        "annual_income": "number, the applicant's annual income (no currency sign or separators)",
        "resident": "boolean, true if the applicant is a resident",
        "has_active_grant": "boolean, true if the applicant already holds an active grant",
    },
)


def _age(rng: random.Random, adult: bool) -> int:
    # Most ages sit next to the 18 boundary, where a policy that only skims the record goes wrong.
    if adult:
        return rng.randint(18, 20) if rng.random() < 0.5 else rng.randint(21, 90)
    return rng.randint(16, 17) if rng.random() < 0.75 else rng.randint(12, 15)


def _income(rng: random.Random, within: bool) -> int:
    if within:
        if rng.random() < 0.1:
            return INCOME_THRESHOLD  # the inclusive edge itself
        return rng.randint(28_000, INCOME_THRESHOLD) if rng.random() < 0.5 else rng.randint(0, 27_999)
    return rng.randint(30_001, 32_000) if rng.random() < 0.6 else rng.randint(32_001, 150_000)


def _facts(rng: random.Random, branch: str) -> dict[str, Any]:
    """Facts for ``branch``: the earlier deny reasons hold, its own fails, later ones fail at random."""
    failing = set()
    if branch != "permit":
        index = _DENY_REASONS.index(branch)
        failing = {branch} | {reason for reason in _DENY_REASONS[index + 1:] if rng.random() < 0.3}
    return {
        "age": _age(rng, adult="minor" not in failing),
        "annual_income": _income(rng, within="income_over_threshold" not in failing),
        "resident": "non_resident" not in failing,
        "has_active_grant": "active_grant" in failing,
    }


def generate(seed: int, n: int) -> list[Record]:
    """``n`` grant applications: half permit, half deny split evenly over the four deny reasons."""
    return balanced_records(NAME, seed, n, BRANCHES, _facts)


def render(record: Record) -> str:
    """The application as the reviewer reads it."""
    facts = record.facts
    residence = "is a resident" if facts["resident"] else "is not a resident"
    grant = "currently holds an active grant" if facts["has_active_grant"] else "holds no active grant"
    return (
        "Grant application.\n"
        f"The applicant is {facts['age']} years old and reports an annual income of {facts['annual_income']:,}. "
        f"The applicant {residence} and {grant}."
    )


DOMAIN = Domain(
    name=NAME,
    rulebook_path=Path(__file__).with_name("grant_eligibility.yaml"),
    spec=SPEC,
    generate=generate,
    render=render,
    branches=BRANCHES,
)
