"""Invariant 1: a reward is None only for an invalid verdict under abstain; otherwise finite and in bounds."""

import math

import pytest
from hypothesis import given, settings
from reward_strategies import CLAIMS, CONFIGS, REFERENCES, verdicts

from proofgym.rewards import DefaultRewardShaper, InvalidVerdictError


@settings(max_examples=1000, deadline=None)
@given(config=CONFIGS, verdict=verdicts(), claim=CLAIMS, reference=REFERENCES)
def test_every_reward_is_none_only_when_abstaining_otherwise_finite_and_in_bounds(config, verdict, claim, reference):
    shaper = DefaultRewardShaper(config)
    if verdict.invalid and config.on_invalid == "raise":
        with pytest.raises(InvalidVerdictError):
            shaper.shape(verdict, claim, reference)
        return
    shaped = shaper.shape(verdict, claim, reference)
    if verdict.invalid and config.on_invalid == "abstain":
        assert shaped.reward is None
        return
    floor, ceiling = shaper.bounds
    assert shaped.reward is not None
    assert math.isfinite(shaped.reward)
    assert floor <= shaped.reward <= ceiling
    assert all(0.0 <= value <= 1.0 for value in shaped.components.values())
    assert all(math.isfinite(value) for value in shaped.contributions.values())
