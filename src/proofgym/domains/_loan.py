"""Loan underwriting: approve, refer to manual review, or deny (rules in loan.yaml)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from proofgym.domains._domain import Domain, Record, balanced_records
from proofgym.domains._spec import DomainSpec

NAME = "loan"

# Branch -> decision. Within deny and refer, the order is the policy's order: a record with several
# reasons carries the first one's label (approve branches say which path to approval it takes).
BRANCHES = {
    "approve_secured": "approve",  # a mortgage or auto loan with loan-to-value at most 0.80
    "approve_unsecured": "approve",  # a personal or business loan at most half the income
    "approve_collateral_covered": "approve",  # unemployed, but collateral covers the whole loan
    "near_prime_credit": "refer",
    "thin_credit_history": "refer",
    "many_existing_loans": "refer",
    "high_ltv": "refer",
    "purpose_mismatch": "refer",
    "short_employment": "refer",
    "large_uncovered_amount": "refer",
    "minor": "deny",
    "dti_over_limit": "deny",
    "subprime_credit": "deny",
    "unemployed_uncovered": "deny",
    "ltv_over_limit": "deny",
}
_REASONS = (  # deny reasons, then refer reasons, in the order the policy applies them
    "minor", "dti_over_limit", "subprime_credit", "unemployed_uncovered", "ltv_over_limit",
    "near_prime_credit", "thin_credit_history", "many_existing_loans", "high_ltv", "purpose_mismatch",
    "short_employment", "large_uncovered_amount",
)
_SECURED = ("mortgage", "auto")
_PURPOSES = {  # the purposes each loan type is meant for; personal loans may be for anything
    "mortgage": ("home_purchase", "refinance"),
    "auto": ("vehicle",),
    "business": ("business",),
    "personal": ("debt_consolidation", "home_improvement", "education", "medical", "vehicle", "other"),
}
_ALL_PURPOSES = ("home_purchase", "refinance", "vehicle", "business", "debt_consolidation", "home_improvement",
                 "education", "medical", "other")

SPEC = DomainSpec(
    name=NAME,
    description=(
        "You underwrite loan applications. Decide \"approve\", \"refer\" (send to a human underwriter) or "
        "\"deny\", applying this policy in order.\n"
        "Deny if any of these holds: the applicant is under 18; the debt-to-income ratio is above 0.43; the "
        "credit score is below 580; the applicant is unemployed and the collateral value is less than the loan "
        "amount; the loan is a mortgage or auto loan (secured) and has no collateral or a loan-to-value ratio "
        "(loan amount / collateral value) above 0.95.\n"
        "Otherwise refer if any of these holds: the credit score is 580 to 669; the credit history is shorter "
        "than 24 months; the applicant has 4 or more existing loans; a mortgage or auto loan has a "
        "loan-to-value ratio above 0.80; the purpose does not fit the loan type (a mortgage must be for "
        "home_purchase or refinance, an auto loan for vehicle, a business loan for business); the applicant "
        "is employed or self-employed for less than 2 years; the collateral value is less than the loan "
        "amount and the loan amount is more than half the annual income.\n"
        "Otherwise approve (the credit score is then 670 or more). Read the application, check each rule, "
        "and decide."
    ),
    decisions=("approve", "refer", "deny"),
    facts={
        "applicant_age": "integer, the applicant's age in whole years",
        "annual_income": "number, gross annual income (no currency sign or separators)",
        "credit_score": "integer, the credit score (300 to 850)",
        "credit_history_months": "integer, length of the credit history in months",
        "debt_to_income_ratio": "number, the debt-to-income ratio as a decimal (0.35, not 35)",
        "employment_status": 'one of "employed", "self_employed", "unemployed", "retired"',
        "employment_years": "number, years in the current job or business",
        "loan_type": 'one of "mortgage", "auto", "personal", "business"',
        "loan_amount": "number, the amount requested",
        "collateral_value": "number, the value of the pledged collateral (0 if none)",
        "loan_purpose": "one of " + ", ".join(f'"{purpose}"' for purpose in _ALL_PURPOSES),
        "existing_loans": "integer, the number of loans the applicant already has",
    },
)


def branch_of(facts: Mapping[str, Any]) -> str:
    """The branch a record exercises: its first deny or refer reason in policy order, else its path
    to approval. The generator's own labelling; gold decisions come from the rule kernel."""
    for reason in _REASONS:
        if _HOLDS[reason](facts):
            return reason
    if facts["employment_status"] == "unemployed":
        return "approve_collateral_covered"
    return "approve_secured" if facts["loan_type"] in _SECURED else "approve_unsecured"


def _ltv(f: Mapping[str, Any]) -> float | None:
    return f["loan_amount"] / f["collateral_value"] if f["collateral_value"] > 0 else None


def _covered(f: Mapping[str, Any]) -> bool:
    return bool(f["collateral_value"] >= f["loan_amount"])


_HOLDS: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "minor": lambda f: f["applicant_age"] < 18,
    "dti_over_limit": lambda f: f["debt_to_income_ratio"] > 0.43,
    "subprime_credit": lambda f: f["credit_score"] < 580,
    "unemployed_uncovered": lambda f: f["employment_status"] == "unemployed" and not _covered(f),
    "ltv_over_limit": lambda f: f["loan_type"] in _SECURED and ((ltv := _ltv(f)) is None or ltv > 0.95),
    "near_prime_credit": lambda f: 580 <= f["credit_score"] < 670,
    "thin_credit_history": lambda f: f["credit_history_months"] < 24,
    "many_existing_loans": lambda f: f["existing_loans"] >= 4,
    "high_ltv": lambda f: f["loan_type"] in _SECURED and (ltv := _ltv(f)) is not None and ltv > 0.8,
    "purpose_mismatch": lambda f: f["loan_type"] != "personal" and f["loan_purpose"] not in _PURPOSES[f["loan_type"]],
    "short_employment": lambda f: f["employment_status"] in ("employed", "self_employed") and f["employment_years"] < 2,
    "large_uncovered_amount": lambda f: not _covered(f) and f["loan_amount"] > 0.5 * f["annual_income"],
}


# ---- the generator: a clean approvable application, then the target branch's flaw ----
# Values crowd the rule boundaries (ages 16-20, scores 560-590 and 660-680, DTI 0.40-0.46, LTV
# 0.75-0.82 and 0.94-0.96, ...), where reading the record carelessly flips the decision.

def _pick(rng: random.Random, near: tuple[int, int], far: tuple[int, int], p_near: float = 0.5) -> int:
    """An integer from ``near`` (the boundary band) with probability ``p_near``, else from ``far``."""
    return rng.randint(*near) if rng.random() < p_near else rng.randint(*far)


def _by_permille(amount: int, permille: int) -> int:
    """``amount * permille / 1000`` rounded down: exact integer ratios, so 800 gives exactly 0.8."""
    return amount * permille // 1000


def _secured_amounts(rng: random.Random, loan_type: str, permille: int) -> tuple[int, int]:
    """(loan amount, collateral value) of a secured loan whose loan-to-value is ``permille`` / 1000."""
    low, high = (100, 1000) if loan_type == "mortgage" else (6, 80)  # thousands
    collateral = rng.randint(low, high) * 1000
    return _by_permille(collateral, permille), collateral


def _base(rng: random.Random, kind: str) -> dict[str, Any]:
    """An application that is approved: ``kind`` is "secured", "unsecured" or "covered" (unemployed,
    with collateral covering the loan)."""
    age = _pick(rng, (18, 21), (22, 75), 0.3)
    if kind == "covered":
        status, years, income = "unemployed", 0.0, rng.randint(0, 150) * 100
    else:
        status = rng.choices(("employed", "self_employed", "retired"), (0.6, 0.25, 0.15))[0]
        longest = 2.5 if rng.random() < 0.3 else max(2.0, age - 18.0)  # 2.0-2.5 years sits on the edge
        years = 0.0 if status == "retired" else round(rng.uniform(2.0, longest), 1)
        income = rng.randint(150, 800) * 100 if status == "retired" else rng.randint(250, 2000) * 100
    facts: dict[str, Any] = {
        "applicant_age": age,
        "annual_income": income,
        "credit_score": _pick(rng, (670, 685), (686, 850), 0.5),
        "credit_history_months": _pick(rng, (24, 30), (31, max(31, (age - 16) * 12)), 0.3),
        "debt_to_income_ratio": round(rng.uniform(0.40, 0.43) if rng.random() < 0.4 else rng.uniform(0.0, 0.40), 3),
        "employment_status": status,
        "employment_years": years,
        "existing_loans": _pick(rng, (3, 3), (0, 2), 0.3),
    }
    if kind == "unsecured" or (kind == "covered" and rng.random() < 0.6):
        loan_type = rng.choice(("personal", "business"))
        if kind == "covered":
            amount = rng.randint(2, 60) * 500
            collateral = _by_permille(amount, _pick(rng, (1000, 1050), (1051, 3000), 0.5))
        else:
            amount = _by_permille(income, _pick(rng, (450, 500), (100, 449), 0.5))
            collateral = 0 if rng.random() < 0.7 else _by_permille(amount, rng.randint(100, 900))
    else:
        loan_type = rng.choice(_SECURED)
        amount, collateral = _secured_amounts(rng, loan_type, _pick(rng, (750, 800), (300, 749), 0.5))
    facts.update(loan_type=loan_type, loan_amount=amount, collateral_value=collateral,
                 loan_purpose=rng.choice(_PURPOSES[loan_type]))
    return facts


def _make_secured(rng: random.Random, f: dict[str, Any], permille: int) -> None:
    if f["loan_type"] not in _SECURED:
        f["loan_type"] = rng.choice(_SECURED)
        f["loan_purpose"] = rng.choice(_PURPOSES[f["loan_type"]])
    f["loan_amount"], f["collateral_value"] = _secured_amounts(rng, f["loan_type"], permille)


def _minor(rng: random.Random, f: dict[str, Any]) -> None:
    f["applicant_age"] = _pick(rng, (16, 17), (14, 15), 0.75)
    f["credit_history_months"] = rng.randint(0, 24)


def _dti_over_limit(rng: random.Random, f: dict[str, Any]) -> None:
    f["debt_to_income_ratio"] = round(rng.uniform(0.431, 0.46) if rng.random() < 0.6 else rng.uniform(0.46, 1.5), 3)


def _subprime_credit(rng: random.Random, f: dict[str, Any]) -> None:
    f["credit_score"] = _pick(rng, (560, 579), (300, 559), 0.6)


def _unemployed_uncovered(rng: random.Random, f: dict[str, Any]) -> None:
    f.update(employment_status="unemployed", employment_years=0.0, annual_income=rng.randint(0, 150) * 100)
    # Collateral just short of the loan is the boundary case (rounding down never reaches the loan).
    short_by = _pick(rng, (950, 999), (100, 949), 0.6)
    f["collateral_value"] = 0 if rng.random() < 0.3 else _by_permille(f["loan_amount"], short_by)


def _ltv_over_limit(rng: random.Random, f: dict[str, Any]) -> None:
    _make_secured(rng, f, _pick(rng, (951, 1000), (1001, 1500), 0.6))
    if rng.random() < 0.15:
        f["collateral_value"] = 0


def _near_prime_credit(rng: random.Random, f: dict[str, Any]) -> None:
    f["credit_score"] = rng.choice((rng.randint(580, 589), rng.randint(660, 669), rng.randint(590, 659)))


def _thin_credit_history(rng: random.Random, f: dict[str, Any]) -> None:
    f["credit_history_months"] = _pick(rng, (18, 23), (0, 17), 0.6)


def _many_existing_loans(rng: random.Random, f: dict[str, Any]) -> None:
    f["existing_loans"] = _pick(rng, (4, 5), (6, 12), 0.6)


def _high_ltv(rng: random.Random, f: dict[str, Any]) -> None:
    _make_secured(rng, f, rng.choice((rng.randint(801, 820), rng.randint(940, 950), rng.randint(821, 939))))


def _purpose_mismatch(rng: random.Random, f: dict[str, Any]) -> None:
    if f["loan_type"] == "personal":
        f["loan_type"] = "business"
    f["loan_purpose"] = rng.choice([p for p in _ALL_PURPOSES if p not in _PURPOSES[f["loan_type"]]])


def _short_employment(rng: random.Random, f: dict[str, Any]) -> None:
    if f["employment_status"] not in ("employed", "self_employed"):
        f["employment_status"] = rng.choice(("employed", "self_employed"))
    f["employment_years"] = round(rng.uniform(1.5, 1.9) if rng.random() < 0.6 else rng.uniform(0.0, 1.4), 1)


def _large_uncovered_amount(rng: random.Random, f: dict[str, Any]) -> None:
    income = max(f["annual_income"], 25_000)
    f.update(annual_income=income, loan_amount=_by_permille(income, _pick(rng, (501, 550), (551, 2000), 0.6)))
    f["collateral_value"] = 0 if rng.random() < 0.7 else _by_permille(f["loan_amount"], rng.randint(100, 900))


_FLAWS: dict[str, Callable[[random.Random, dict[str, Any]], None]] = {
    "minor": _minor,
    "dti_over_limit": _dti_over_limit,
    "subprime_credit": _subprime_credit,
    "unemployed_uncovered": _unemployed_uncovered,
    "ltv_over_limit": _ltv_over_limit,
    "near_prime_credit": _near_prime_credit,
    "thin_credit_history": _thin_credit_history,
    "many_existing_loans": _many_existing_loans,
    "high_ltv": _high_ltv,
    "purpose_mismatch": _purpose_mismatch,
    "short_employment": _short_employment,
    "large_uncovered_amount": _large_uncovered_amount,
}
_KIND = {  # the clean application each branch starts from, where it matters
    "approve_secured": "secured", "approve_unsecured": "unsecured", "approve_collateral_covered": "covered",
    "ltv_over_limit": "secured", "high_ltv": "secured", "large_uncovered_amount": "unsecured",
}


def _facts(rng: random.Random, branch: str) -> dict[str, Any]:
    """Facts whose :func:`branch_of` is ``branch``: a clean application, the branch's flaw, and
    sometimes a second, later flaw, so records with several reasons occur too."""
    for _ in range(100):
        kind = _KIND.get(branch) or rng.choices(("secured", "unsecured", "covered"), (0.45, 0.45, 0.1))[0]
        facts = _base(rng, kind)
        if branch in _FLAWS:
            _FLAWS[branch](rng, facts)
            later = _REASONS[_REASONS.index(branch) + 1:]
            if later and rng.random() < 0.3:
                _FLAWS[rng.choice(later)](rng, facts)
        # A later flaw can undo the target (short employment ends unemployment): draw again.
        if branch_of(facts) == branch:
            return {name: facts[name] for name in SPEC.facts}  # the spec's order, in prompts and answers
    raise RuntimeError(f"could not generate a loan record for branch {branch!r}")  # a generator bug


def generate(seed: int, n: int) -> list[Record]:
    """``n`` loan applications: a third each approve, refer and deny, each split evenly over its branches."""
    return balanced_records(NAME, seed, n, BRANCHES, _facts)


def render(record: Record) -> str:
    """The application form as the underwriter reads it."""
    f = record.facts
    collateral = f"{f['collateral_value']:,}" if f["collateral_value"] else "none (0)"
    return "\n".join([
        "Loan application.",
        f"- Applicant age: {f['applicant_age']} years",
        f"- Gross annual income: {f['annual_income']:,}",
        f"- Employment status: {f['employment_status']}",
        f"- Years in current job or business: {f['employment_years']:g}",
        f"- Credit score: {f['credit_score']}",
        f"- Credit history: {f['credit_history_months']} months",
        f"- Debt-to-income ratio: {f['debt_to_income_ratio']:g}",
        f"- Existing loans: {f['existing_loans']}",
        f"- Loan type: {f['loan_type']}",
        f"- Loan purpose: {f['loan_purpose']}",
        f"- Amount requested: {f['loan_amount']:,}",
        f"- Collateral value: {collateral}",
    ])


DOMAIN = Domain(
    name=NAME,
    rulebook_path=Path(__file__).with_name("loan.yaml"),
    spec=SPEC,
    generate=generate,
    render=render,
    branches=BRANCHES,
)
