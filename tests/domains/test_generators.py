"""Generators: deterministic per seed, balanced over decisions and branches, dense at rule boundaries."""

from collections import Counter

import pytest

from proofgym.domains import get_domain
from proofgym.domains._loan import _HOLDS, branch_of

N = 3000


def test_same_seed_same_records(domain):
    assert domain.generate(7, 200) == domain.generate(7, 200)


def test_other_seed_other_records(domain):
    assert [r.facts for r in domain.generate(7, 50)] != [r.facts for r in domain.generate(8, 50)]


def test_a_record_does_not_change_when_n_grows(domain):
    assert domain.generate(3, 500)[:40] == domain.generate(3, 40)


def test_generation_ignores_the_global_random_state(domain):
    import random

    random.seed(1)
    first = domain.generate(5, 100)
    random.seed(2)
    assert domain.generate(5, 100) == first


def test_ids_are_unique(domain):
    records = domain.generate(0, N)
    assert len({r.id for r in records}) == N


def test_records_carry_exactly_the_specs_facts(domain):
    for record in domain.generate(0, 500):
        assert list(record.facts) == list(domain.spec.facts)


def test_decisions_are_balanced(domain):
    expected = Counter(domain.branches[r.branch] for r in domain.generate(11, N))
    share = N / len(domain.spec.decisions)
    assert set(expected) == set(domain.spec.decisions)
    assert all(abs(count - share) <= 1 for count in expected.values()), expected


def test_branches_of_a_decision_are_balanced(domain):
    counts = Counter(r.branch for r in domain.generate(11, N))
    assert set(counts) == set(domain.branches)  # every branch occurs
    for decision in domain.spec.decisions:
        same = [counts[b] for b, d in domain.branches.items() if d == decision]
        assert max(same) - min(same) <= 1, (decision, same)


def test_small_datasets_are_balanced_too(domain):
    decisions = Counter(domain.branches[r.branch] for r in domain.generate(2, 12))
    assert max(decisions.values()) - min(decisions.values()) <= 1


def _share(records, test):
    return sum(1 for r in records if test(r.facts)) / len(records)


def test_grant_values_crowd_the_boundaries():
    records = get_domain("grant_eligibility").generate(0, N)
    assert _share(records, lambda f: 16 <= f["age"] <= 20) > 0.4
    assert _share(records, lambda f: 28_000 <= f["annual_income"] <= 32_000) > 0.4
    assert _share(records, lambda f: f["age"] in (17, 18)) > 0.1
    assert _share(records, lambda f: f["annual_income"] == 30_000) > 0.02  # the inclusive edge itself
    assert _share(records, lambda f: 30_000 < f["annual_income"] <= 30_500) > 0.01


def test_loan_values_crowd_the_boundaries():
    records = get_domain("loan").generate(0, N)
    assert _share(records, lambda f: 16 <= f["applicant_age"] <= 20) > 0.15
    assert _share(records, lambda f: 570 <= f["credit_score"] <= 590 or 660 <= f["credit_score"] <= 680) > 0.25
    assert _share(records, lambda f: 0.40 <= f["debt_to_income_ratio"] <= 0.46) > 0.3
    assert _share(records, lambda f: 18 <= f["credit_history_months"] <= 30) > 0.2
    secured = [r for r in records if r.facts["loan_type"] in ("mortgage", "auto") and r.facts["collateral_value"]]
    ltv = [r.facts["loan_amount"] / r.facts["collateral_value"] for r in secured]
    near_edge = sum(1 for x in ltv if 0.75 <= x <= 0.82 or 0.93 <= x <= 0.97)
    assert near_edge / len(ltv) > 0.4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loan_records_exercise_the_branch_they_are_labelled_with(seed):
    for record in get_domain("loan").generate(seed, N):
        assert branch_of(record.facts) == record.branch


def test_loan_records_with_several_reasons_occur():
    records = get_domain("loan").generate(0, N)
    flawed = [r for r in records if get_domain("loan").branches[r.branch] != "approve"]
    several = [r for r in flawed if sum(test(r.facts) for test in _HOLDS.values()) >= 2]
    assert len(several) / len(flawed) > 0.15
