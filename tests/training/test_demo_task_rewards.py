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


def test_training_rows_never_repeat_a_held_out_case():
    heldout = demo_rows(100, 300)
    train = demo_rows(101, 2000, exclude=heldout)
    held = {tuple(sorted(r["source_facts"].items())) for r in heldout}
    assert len(train) == 2000 and not any(tuple(sorted(r["source_facts"].items())) in held for r in train)


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
