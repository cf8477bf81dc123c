"""The breakdown explains the reward: components are raw values in [0, 1], contributions are their
weighted shares, and the reward is the sum of the contributions."""

import json

import pytest

from proofgym.core import Claim
from proofgym.rewards import DefaultRewardShaper, ShaperConfig
from proofgym.testing import refuted


def test_contributions_are_weighted_components_summing_to_the_reward():
    config = ShaperConfig(graded_component="score")
    shaper = DefaultRewardShaper(config)
    verdict = refuted("port closed", components={"score": 0.5, "graded": 1.0})
    claim = Claim("no", facts={"port": 22, "open": False, "user": "root"})
    shaped = shaper.shape(verdict, claim, {"gold": "no", "source_facts": {"port": 22, "open": False}})
    assert shaped.components == {
        "format": 1.0,
        "certified": 0.0,
        "correct": 1.0,
        "grounded": 0.0,
        "graded": 0.0,  # partial credit is never paid on rejected facts
        "rejected": pytest.approx(1 / 3),
    }
    weights = config.weights.model_dump()
    for name, weight in weights.items():
        assert shaped.contributions[name] == weight * shaped.components[name]
    assert shaped.contributions["rejected"] == pytest.approx(-config.penalties.rejected / 3)
    assert shaped.reward == pytest.approx(sum(shaped.contributions.values()))
    assert shaped.reason == "refuted: port closed; decision matches the reference; rejected facts: user"
    grounded = shaper.shape(verdict, Claim("no", facts={"port": 22}), {"gold": "no", "source_facts": {"port": 22}})
    assert grounded.components["graded"] == 0.5 and grounded.contributions["graded"] == 0.5 * config.weights.graded


def test_to_dict_is_json_native():
    shaped = DefaultRewardShaper().shape(refuted(rejected={"a": 1}), Claim("x", facts={"a": 1}))
    data = json.loads(json.dumps(shaped.to_dict()))
    assert data == {
        "reward": shaped.reward,
        "outcome": "refuted",
        "components": shaped.components,
        "contributions": shaped.contributions,
        "reason": shaped.reason,
        "rejected_facts": ["a"],
    }


def test_no_penalty_shows_as_zero_not_negative_zero():
    shaped = DefaultRewardShaper().shape(refuted(), Claim("x"))
    assert str(shaped.contributions["rejected"]) == "0.0"
