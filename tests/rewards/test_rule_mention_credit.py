import pytest

from proofgym.core import Claim
from proofgym.rewards import DefaultRewardShaper, ShaperConfig, rule_mention_credit
from proofgym.testing import certified

TRACE = {"symbolic_trace": {"rules": [
    {"rule_name": "is_adult", "fired": True},
    {"rule_name": "income_within_threshold", "fired": True},
    {"rule_name": "active_grant_blocks", "fired": False},
]}}


def test_naming_every_fired_rule_earns_full_credit():
    assert rule_mention_credit(TRACE, "is_adult holds and income within threshold holds") == 1.0


def test_naming_some_earns_a_share_and_naming_idle_rules_costs():
    assert rule_mention_credit(TRACE, "Is Adult.") == 0.5
    assert rule_mention_credit(TRACE, "is_adult; active_grant_blocks") == 0.0
    assert rule_mention_credit(TRACE, "is_adult, income_within_threshold, active grant blocks") == 0.5


def test_partial_words_do_not_count():
    assert rule_mention_credit(TRACE, "this_is_adultery") == 0.0


def test_missing_reasoning_or_trace_earns_nothing():
    assert rule_mention_credit(TRACE, None) == 0.0
    assert rule_mention_credit({}, "is_adult") == 0.0
    assert rule_mention_credit({"symbolic_trace": {"rules": "garbage"}}, "is_adult") == 0.0


def test_shaper_uses_mentions_when_configured():
    shaper = DefaultRewardShaper(ShaperConfig(graded_from="rule_mentions"))
    verdict = certified("permit", evidence=TRACE)
    named = shaper.shape(verdict, Claim("permit", {"age": 30}, reasoning="is_adult, income within threshold"))
    silent = shaper.shape(verdict, Claim("permit", {"age": 30}, reasoning="trust me"))
    assert named.components["graded"] == 1.0 and silent.components["graded"] == 0.0
    assert named.reward - silent.reward == pytest.approx(shaper.config.weights.graded)
