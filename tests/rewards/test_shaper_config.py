"""ShaperConfig accepts only configs that keep the shaper's invariants, and says why it refuses."""

import pytest
from pydantic import ValidationError

from proofgym.rewards import DefaultRewardShaper, ShaperConfig


def test_defaults():
    config = ShaperConfig()
    weights = {"format": 0.1, "certified": 0.5, "correct": 1.0, "grounded": 0.3, "graded": 0.2}
    assert config.weights.model_dump() == weights
    assert config.penalties.rejected == 0.3
    assert (config.floor, config.on_invalid, config.graded_component) == (-1.0, "abstain", "graded")
    assert DefaultRewardShaper(config).bounds == (-1.0, 2.1)


def test_graded_weight_not_below_every_tier_weight_is_refused_with_the_reason():
    with pytest.raises(ValidationError) as raised:
        ShaperConfig(weights={"graded": 0.4})
    message = str(raised.value)
    assert "weights.graded (0.4) must be smaller than each of weights.certified, weights.correct" in message
    assert "(min 0.3)" in message
    assert "always outscores the rest" in message


def test_graded_weight_equal_to_a_tier_weight_is_refused():
    with pytest.raises(ValidationError, match=r"weights.graded \(0.5\) must be smaller"):
        ShaperConfig(weights={"graded": 0.5, "grounded": 0.5})


def test_graded_weight_within_rounding_of_a_tier_weight_is_refused():
    with pytest.raises(ValidationError, match="by more than 1e-09 x the total weight"):
        ShaperConfig(weights={"graded": 0.3 - 1e-15})


def test_a_floor_above_the_worst_penalty_is_refused():
    with pytest.raises(ValidationError, match=r"floor \(-0.2\) must not exceed -penalties.rejected \(-0.3\)"):
        ShaperConfig(floor=-0.2)


def test_the_floor_may_equal_the_worst_penalty():
    assert ShaperConfig(floor=-0.5, penalties={"rejected": 0.5}).floor == -0.5


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"weights": {"format": -0.1}}, "greater than or equal to 0"),
        ({"penalties": {"rejected": -1}}, "greater than or equal to 0"),
        ({"weights": {"correct": float("inf")}}, "finite number"),
        ({"floor": float("nan")}, "finite number"),
        ({"floor": -float("inf")}, "finite number"),
        ({"weights": {"correct": 1e308, "certified": 1e308}}, "must sum to a finite number"),
        ({"weights": {"bonus": 1.0}}, "Extra inputs are not permitted"),
        ({"penalties": {"invented": 1.0}}, "Extra inputs are not permitted"),
        ({"ceiling": 3.0}, "Extra inputs are not permitted"),
        ({"on_invalid": "zero"}, "'abstain', 'floor' or 'raise'"),
        ({"weights": {"correct": "1.0"}}, "valid number"),
        ({"weights": {"correct": True}}, "valid number"),
        ({"graded_component": ""}, "at least 1 character"),
    ],
)
def test_malformed_configs_are_refused_clearly(kwargs, fragment):
    with pytest.raises(ValidationError, match=fragment):
        ShaperConfig(**kwargs)


def test_config_is_frozen_so_it_cannot_be_invalidated_after_validation():
    config = ShaperConfig()
    with pytest.raises(ValidationError):
        config.weights.graded = 5.0
