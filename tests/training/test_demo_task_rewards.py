"""The demo's short answer goes through the real reward path, and "certified" means what it says."""

import pytest

from proofgym.domains import get_domain
from proofgym.training import demo_completion, demo_rows, demo_run_config
from proofgym.training._demo_task import BRANCH_LABELS


@pytest.fixture(scope="module")
def reward_fn():
    fn = demo_run_config().reward_function()
    yield fn
    fn.close()


@pytest.fixture(scope="module")
def rows():
    return demo_rows(11, 50)


def _score(reward_fn, rows, completions):
    return reward_fn.score([r["prompt"] for r in rows], completions, rows)


def test_the_right_decision_on_the_records_facts_is_certified_at_the_ceiling(reward_fn, rows):
    items = _score(reward_fn, rows, [demo_completion(r["gold"], r["source_facts"]) for r in rows])
    ceiling = reward_fn.shaper.bounds[1]
    for item in items:
        assert item.outcome == "certified" and item.components["certified"] == 1.0 and item.reward == ceiling
        assert item.verdict.evidence["proof_checked"] is True


def test_the_wrong_decision_is_not_certified_and_scores_far_below(reward_fn, rows):
    wrong = {"permit": "deny", "deny": "permit"}
    items = _score(reward_fn, rows, [demo_completion(wrong[r["gold"]], r["source_facts"]) for r in rows])
    for item in items:
        assert item.components["certified"] == 0.0 and item.components["correct"] == 0.0
        assert item.reward < reward_fn.shaper.bounds[1] - 1.0


def test_a_mis_copied_fact_is_never_certified_even_with_the_right_decision(reward_fn, rows):
    completions = [demo_completion(r["gold"], {**r["source_facts"], "annual_income": r["source_facts"]
                                               ["annual_income"] + 1}) for r in rows]
    for item in _score(reward_fn, rows, completions):
        assert item.components["certified"] == 0.0 and item.components["grounded"] == 0.0
        assert "annual_income" in item.reason


def test_a_decision_without_the_facts_is_a_format_failure(reward_fn, rows):
    items = _score(reward_fn, rows[:3], ['<decision>{"classification": "deny"}</decision>'] * 3)
    assert all(item.outcome == "format_error" and item.reward == -1.0 for item in items)


def _case(row):
    return tuple(sorted(row["source_facts"].items()))


def test_training_rows_never_repeat_a_held_out_case():
    for heldout in (demo_rows(100, 300), demo_rows(100, 300, heldout=True)):
        train = demo_rows(101, 2000, exclude=heldout)
        held = {_case(r) for r in heldout}
        assert len(train) == 2000 and not any(_case(r) in held for r in train)


@pytest.fixture(scope="module")
def heldout_rows():
    return demo_rows(0, 1000, heldout=True)


def test_a_held_out_set_holds_each_case_once_and_every_cell(heldout_rows):
    assert len(heldout_rows) == 1000 and len({_case(r) for r in heldout_rows}) == 1000
    drawn_cells = {r["cell"] for r in demo_rows(0, 4000)}
    assert {r["cell"] for r in heldout_rows} == drawn_cells
    assert demo_rows(0, 1000, heldout=True) == heldout_rows  # a seed fixes the set


def test_a_held_out_set_leaves_most_of_a_rare_cells_cases_to_training(heldout_rows):
    # Permits at exactly the income threshold are few distinct cases (ages 18-20 among them, drawn often):
    # drawn as training rows, 1000 held-out rows swallowed all three age-18-20 cases, and training never saw one.
    cell = "permit_eligible@income_at_threshold"
    rare = [r for r in demo_rows(0, 6000) if r["cell"] == cell]
    cases = {_case(r) for r in rare}
    held = {_case(r) for r in heldout_rows if r["cell"] == cell}
    assert held and len(held) <= len(cases) // 4
    train = demo_rows(1, 8000, exclude=heldout_rows)
    young = [r for r in train if r["cell"] == cell and r["source_facts"]["age"] <= 20]
    assert len(young) >= 20


def test_rows_cover_every_rule_branch_and_carry_the_kernels_gold(rows):
    assert {r["branch"] for r in rows} == set(BRANCH_LABELS)
    assert set(BRANCH_LABELS) == set(get_domain("grant_eligibility").branches)
    for r in rows:
        assert r["gold"] == ("permit" if r["branch"] == "permit" else "deny")
    with pytest.raises(ValueError, match="n must be"):
        demo_rows(0, -1)


def test_a_permit_at_exactly_the_income_threshold_is_a_curriculum_cell_of_its_own():
    from proofgym.training import demo_rows

    rows = demo_rows(0, 2000)
    at_threshold = [r for r in rows if r["cell"] == "permit_eligible@income_at_threshold"]
    assert at_threshold and all(r["source_facts"]["annual_income"] == 30000 and r["gold"] == "permit"
                                for r in at_threshold)
    # A denied record at the threshold is denied for another reason: its cell is that reason's.
    denied = [r for r in rows if r["gold"] == "deny" and r["source_facts"]["annual_income"] == 30000]
    assert denied and all("@" not in r["cell"] for r in denied)
    assert all(r["cell"] == "permit_eligible" for r in rows
               if r["gold"] == "permit" and r["source_facts"]["annual_income"] != 30000)


def test_contrast_rows_append_a_digit_to_four_digit_incomes_and_take_the_kernels_labels(heldout_rows):
    from proofgym.training._demo_task import contrast_rows

    train = demo_rows(3, 3000, exclude=heldout_rows)
    twins = contrast_rows(train, seed=3, exclude=heldout_rows)
    four_digit = [r for r in train if 1_000 <= r["source_facts"]["annual_income"] <= 9_999]
    assert four_digit and 0.9 * len(four_digit) <= len(twins) <= len(four_digit)
    by_id = {r["id"]: r for r in train}
    for twin in twins:
        original = by_id[twin["id"].removesuffix("-contrast")]
        income = twin["source_facts"]["annual_income"]
        assert income // 10 == original["source_facts"]["annual_income"]
        assert {k: v for k, v in twin["source_facts"].items() if k != "annual_income"} == \
            {k: v for k, v in original["source_facts"].items() if k != "annual_income"}
        assert str(income) in twin["prompt"]
        denied_for_income = income > 30_000
        assert (twin["gold"] == "deny") == (denied_for_income or original["branch"] != "permit")
    # Most four-digit permits become denials for income: the contrast the generator rarely draws.
    assert sum(t["branch"] == "income_over_threshold" for t in twins) > len(twins) / 2
    held = {_case(r) for r in heldout_rows}
    assert not any(_case(t) in held for t in twins)
    assert contrast_rows(train, seed=3, exclude=heldout_rows) == twins  # a seed fixes them


def test_a_rows_branch_label_is_the_first_deny_reason_the_kernel_fires(rows):
    from proofgym.training._demo_task import _branch

    assert all(_branch(r["source_facts"]) == r["branch"] for r in demo_rows(5, 600))
