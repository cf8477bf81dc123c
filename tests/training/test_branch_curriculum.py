from collections import Counter

import pytest

from proofgym.training import BranchCurriculum


def _rows():
    # Half permit (one branch), half deny over four branches, as the grant domain generates them.
    rows = [{"prompt": f"p{i}", "gold": "permit", "branch": "permit"} for i in range(40)]
    for branch in ("minor", "income", "resident", "grant"):
        rows += [{"prompt": f"{branch}{i}", "gold": "deny", "branch": branch} for i in range(10)]
    return rows


def test_each_decision_keeps_its_share_of_the_rows():
    curriculum = BranchCurriculum(_rows(), seed=0)
    weights = curriculum.weights()
    assert weights["permit"] == pytest.approx(0.5)
    assert sum(weights.values()) == pytest.approx(1.0)
    # Even after the policy has learned to deny everything, permits keep their half.
    curriculum.update({"permit": (0, 100), "minor": (100, 100), "income": (100, 100), "resident": (100, 100),
                       "grant": (100, 100)})
    assert curriculum.weights()["permit"] == pytest.approx(0.5)


def test_a_branch_the_policy_gets_wrong_is_drawn_more():
    curriculum = BranchCurriculum(_rows(), seed=0)
    for _ in range(30):
        curriculum.update({"minor": (2, 10), "income": (10, 10), "resident": (10, 10), "grant": (10, 10)})
    weights = curriculum.weights()
    assert weights["minor"] > 2 * weights["income"]
    assert weights["income"] > 0.05  # never starved: the uniform share stays
    drawn = Counter(row["branch"] for row in curriculum.sample(4000))
    assert drawn["minor"] > 2 * drawn["income"]
    assert 0.45 < drawn["permit"] / 4000 < 0.55


def test_the_same_seed_draws_the_same_rows():
    assert BranchCurriculum(_rows(), seed=3).sample(50) == BranchCurriculum(_rows(), seed=3).sample(50)


def test_rows_without_branch_or_gold_share_one_cell():
    curriculum = BranchCurriculum([{"prompt": "a"}, {"prompt": "b"}], seed=0)
    assert curriculum.branches == ["all"] and curriculum.weights() == {"all": pytest.approx(1.0)}
    assert {row["prompt"] for row in curriculum.sample(20)} == {"a", "b"}


@pytest.mark.parametrize("kwargs", [{"mix": 1.5}, {"decay": 1.0}, {"min_error": 0.0}, {"replay": 1.0}])
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        BranchCurriculum(_rows(), seed=0, **kwargs)
    with pytest.raises(ValueError, match="at least one"):
        BranchCurriculum([], seed=0)


def test_the_curriculum_can_split_rows_by_another_column():
    rows = [{"prompt": str(i), "gold": "deny", "branch": "minor", "cell": "minor" if i % 3 else "minor+grant"}
            for i in range(30)]
    curriculum = BranchCurriculum(rows, seed=0, key="cell")
    assert curriculum.branches == ["minor", "minor+grant"]
    assert curriculum.branch_of(rows[0]) == "minor+grant"
    curriculum.update({"minor": (0, 10), "minor+grant": (10, 10)})
    assert curriculum.weights()["minor"] > curriculum.weights()["minor+grant"]


def test_rows_answered_partly_wrong_are_replayed_until_answered_right():
    rows = _rows()
    hard = rows[3]
    curriculum = BranchCurriculum(rows, seed=0, replay=0.5)
    assert curriculum.replay_pool_size == 0
    curriculum.observe([(hard, 4, 8), (rows[4], 8, 8)])
    assert curriculum.replay_pool_size == 1
    drawn = curriculum.sample(1000)
    assert 400 < sum(row is hard for row in drawn) < 600  # half the draws, from a pool of one
    curriculum.observe([(hard, 8, 8)])
    assert curriculum.replay_pool_size == 0
    assert sum(row is hard for row in curriculum.sample(1000)) < 50


def test_replay_favours_rows_whose_samples_disagree():
    rows = _rows()
    curriculum = BranchCurriculum(rows, seed=0, replay=0.9)
    curriculum.observe([(rows[0], 4, 8), (rows[1], 0, 8)])  # split 4/4 against all wrong
    drawn = curriculum.sample(2000)
    assert sum(row is rows[0] for row in drawn) > 5 * sum(row is rows[1] for row in drawn) > 0
    curriculum.observe([({"prompt": "not a training row"}, 0, 8)])
    assert curriculum.replay_pool_size == 2


def test_replay_weighted_by_error_favours_rows_every_sample_got_wrong():
    rows = _rows()
    curriculum = BranchCurriculum(rows, seed=0, replay=0.9, replay_weighting="error")
    curriculum.observe([(rows[0], 4, 8), (rows[1], 0, 8), (rows[2], 7, 8)])  # split, all wrong, one wrong
    drawn = Counter(id(row) for row in curriculum.sample(3000))
    assert drawn[id(rows[1])] > 1.5 * drawn[id(rows[0])] > 1.5 * drawn[id(rows[2])] > 0


def test_an_unknown_replay_weighting_is_rejected_with_the_known_ones():
    with pytest.raises(ValueError, match=r"replay_weighting must be one of \['disagreement', 'error'\], got 'loud'"):
        BranchCurriculum(_rows(), seed=0, replay=0.5, replay_weighting="loud")
