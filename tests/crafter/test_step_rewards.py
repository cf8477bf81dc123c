"""The reward modes against hand-computed decisions: event rewards (unique / ach_delta), the reference's stepwise
strategies (consistent / per_achievement with weights, k_limits and inventory shaping), and the outcome reward."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from proofgym.crafter import ACHIEVEMENTS, EpisodeRewards, StepRewardConfig


def counts(**unlocked):
    return {name: unlocked.get(name, 0) for name in ACHIEVEMENTS}


# Three decisions: wood x1; wood x2 more and a table; a sapling collected and planted.
EPISODE = [
    (counts(), counts(collect_wood=1), {"wood": 1}),
    (counts(collect_wood=1), counts(collect_wood=3, place_table=1), {"wood": 1}),
    (counts(collect_wood=3, place_table=1), counts(collect_wood=3, place_table=1, collect_sapling=1, place_plant=1),
     {"wood": 1}),
]


def play(rewards):
    return [rewards.decision(before, after, inventory) for before, after, inventory in EPISODE]


def test_unique_pays_each_achievement_once_and_ach_delta_pays_every_unlock():
    unique = play(EpisodeRewards("unique", StepRewardConfig(), 0.0))
    assert [c["achievements"] for c, _ in unique] == [1.0, 1.0, 2.0]
    assert [new for _, new in unique] == [["collect_wood"], ["place_table"], ["collect_sapling", "place_plant"]]
    delta = play(EpisodeRewards("ach_delta", StepRewardConfig(), 0.0))
    assert [c["achievements"] for c, _ in delta] == [1.0, 3.0, 2.0]  # 2 more wood + a table


def test_stepwise_rewards_are_off_unless_enabled():
    assert all("decision" not in c for c, _ in play(EpisodeRewards("unique", StepRewardConfig(), 0.0)))


def test_consistent_pays_lambda_for_a_decision_that_unlocked_anything_new():
    config = StepRewardConfig(enabled=True, strategy="consistent", indicator_lambda=0.5)
    rewards = EpisodeRewards("unique", config, 0.0)
    results = play(rewards)
    assert [c["decision"] for c, _ in results] == [0.5, 0.5, 0.5]
    again, _ = rewards.decision(EPISODE[-1][1], counts(collect_wood=5, place_table=1, collect_sapling=1,
                                                         place_plant=1), {"wood": 3})
    assert again["decision"] == 0.0  # more wood is not new


def test_per_achievement_sums_weights_within_k_limits_plus_first_held_items():
    config = StepRewardConfig(enabled=True, strategy="per_achievement", indicator_lambda=2.0,
                              weights={"collect_wood": 0.5, "place_table": 3.0}, k_limits={"collect_wood": 2},
                              inventory_weights={"wood": 0.1, "sapling": 0.05})
    results = play(EpisodeRewards("unique", config, 0.0))
    # 1: wood x1 (0.5, credited 1 of 2) + wood first held (0.1)            -> 0.6
    # 2: wood x2 but only 1 credit left (0.5) + table (3.0); wood held before -> 3.5
    # 3: sapling and plant, default weight 1 each (k_limit 1); sapling never held in inventory here -> 2.0
    assert [c["decision"] for c, _ in results] == pytest.approx([2 * 0.6, 2 * 3.5, 2 * 2.0])


def test_inventory_shaping_is_paid_once_per_item_per_episode():
    config = StepRewardConfig(enabled=True, strategy="per_achievement", weights={}, inventory_weights={"stone": 0.2})
    rewards = EpisodeRewards("unique", config, 0.0)
    first, _ = rewards.decision(counts(), counts(), {"stone": 1})
    second, _ = rewards.decision(counts(), counts(), {"stone": 0})
    third, _ = rewards.decision(counts(), counts(), {"stone": 2})
    assert (first["decision"], second["decision"], third["decision"]) == (0.2, 0.0, 0.0)


def test_the_outcome_reward_is_weight_times_progress():
    rewards = EpisodeRewards("unique", StepRewardConfig(), 2.0)
    play(rewards)
    assert rewards.outcome() == {"outcome": pytest.approx(2.0 * 4 / 22)}


@pytest.mark.parametrize("bad", [{"weights": {"collect_gold": 1.0}}, {"k_limits": {"make_wood_pickaxe": -1}},
                                 {"strategy": "dense"}, {"mode": "episode"}, {"inventory_weights": {"gold": 1}},
                                 {"indicator_lambda": float("inf")}, {"surprise": 1}])
def test_invalid_step_reward_configs_name_the_key(bad):
    with pytest.raises(ValidationError) as caught:
        StepRewardConfig(**bad)
    assert next(iter(bad)) in str(caught.value)
