"""The loan rulebook: every branch is reachable and decides as its label says; boundaries are exact."""

import pytest

from proofgym.domains import get_domain

from ._support import kernel_for

LOAN = get_domain("loan")

# An application that is approved, sitting on every boundary it can: each case below moves one fact
# across (or onto) one edge.
EDGE = {
    "applicant_age": 18, "annual_income": 60_000, "credit_score": 670, "credit_history_months": 24,
    "debt_to_income_ratio": 0.43, "employment_status": "employed", "employment_years": 2.0, "loan_type": "auto",
    "loan_amount": 24_000, "collateral_value": 30_000, "loan_purpose": "vehicle", "existing_loans": 3,
}
CASES = [
    ({}, "approve"),
    ({"applicant_age": 17}, "deny"),
    ({"debt_to_income_ratio": 0.431}, "deny"),
    ({"credit_score": 669}, "refer"),
    ({"credit_score": 580}, "refer"),
    ({"credit_score": 579}, "deny"),
    ({"credit_history_months": 23}, "refer"),
    ({"existing_loans": 4}, "refer"),
    ({"employment_years": 1.9}, "refer"),
    ({"employment_status": "retired", "employment_years": 0.0}, "approve"),
    ({"loan_amount": 24_030}, "refer"),  # loan-to-value 0.801
    ({"loan_amount": 28_500}, "refer"),  # loan-to-value 0.95 exactly: review, not denial
    ({"loan_amount": 28_530}, "deny"),  # loan-to-value 0.951
    ({"collateral_value": 0}, "deny"),  # a secured loan without collateral
    ({"loan_purpose": "education"}, "refer"),
    ({"loan_type": "personal", "loan_purpose": "education", "collateral_value": 0, "loan_amount": 30_000},
     "approve"),  # exactly half the income
    ({"loan_type": "personal", "loan_purpose": "education", "collateral_value": 0, "loan_amount": 30_001},
     "refer"),
    ({"loan_type": "personal", "loan_purpose": "education", "collateral_value": 30_001, "loan_amount": 30_001},
     "approve"),  # covered by collateral, so the income does not matter
    ({"loan_type": "business", "loan_purpose": "business", "collateral_value": 0, "loan_amount": 10_000},
     "approve"),
    ({"employment_status": "unemployed", "employment_years": 0.0}, "approve"),  # collateral covers the loan
    ({"employment_status": "unemployed", "employment_years": 0.0, "loan_type": "personal",
      "loan_purpose": "medical", "loan_amount": 10_000, "collateral_value": 10_000}, "approve"),
    ({"employment_status": "unemployed", "employment_years": 0.0, "loan_type": "personal",
      "loan_purpose": "medical", "loan_amount": 10_000, "collateral_value": 9_999}, "deny"),
]


@pytest.fixture(scope="module")
def kernel():
    return kernel_for(LOAN)


@pytest.mark.parametrize(("change", "decision"), CASES, ids=[str(c) for c, _ in CASES])
def test_decides_exactly_at_the_boundaries(kernel, change, decision):
    report = kernel.query({**EDGE, **change})
    assert report["proof_checked"] and report["decision"] == decision, report["deciding_rules"]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_branch_is_reachable_and_decides_as_labelled(kernel, seed):
    seen = set()
    for record in LOAN.generate(seed, 3000):
        report = kernel.query(dict(record.facts))
        assert report["proof_checked"], record
        assert report["decision"] == LOAN.branches[record.branch], (record.branch, dict(record.facts))
        seen.add(record.branch)
    assert seen == set(LOAN.branches)


def test_a_failed_hard_requirement_is_named_by_the_denial(kernel):
    report = kernel.query({**EDGE, "debt_to_income_ratio": 0.5})
    assert report["decision"] == "deny" and report["deciding_rules"] == ["dti_within_limit"]


def test_loan_to_value_is_derived_with_arithmetic(kernel):
    report = kernel.query(EDGE)
    assert report["proof"]["facts"]["loan_to_value"] == pytest.approx(0.8)
