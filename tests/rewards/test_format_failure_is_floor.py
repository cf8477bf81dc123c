"""Invariant 3: a format failure scores exactly the floor, and nothing parsed scores below it."""

from hypothesis import given, settings, strategies as st
from reward_strategies import CLAIMS, CONFIGS, REFERENCES, verdicts

from proofgym.core import Claim, Outcome
from proofgym.rewards import DefaultRewardShaper, ShaperConfig
from proofgym.testing import refuted

PARSED_VERDICTS = verdicts(outcomes=st.sampled_from([Outcome.CERTIFIED, Outcome.REFUTED]))


@settings(max_examples=500, deadline=None)
@given(config=CONFIGS, reason=st.text(), verdict=PARSED_VERDICTS, claim=CLAIMS, reference=REFERENCES)
def test_format_failure_is_exactly_the_floor_and_nothing_parsed_is_below(config, reason, verdict, claim, reference):
    shaper = DefaultRewardShaper(config)
    failure = shaper.format_failure(reason)
    assert failure.reward == config.floor == shaper.bounds[0]
    assert (failure.outcome, failure.reason) == ("format_error", reason)
    assert shaper.shape(verdict, claim, reference).reward >= failure.reward


def test_the_worst_parsed_completion_scores_above_the_default_floor():
    shaper = DefaultRewardShaper()
    worst = shaper.shape(refuted(rejected={"a": 1, "b": 2}), Claim("no", facts={"a": 1}), {"gold": "yes"})
    assert worst.components["rejected"] == 1.0
    assert worst.reward > shaper.format_failure("unparsable").reward


def test_format_failure_uses_the_configured_floor():
    assert DefaultRewardShaper(ShaperConfig(floor=-2.5)).format_failure("no JSON object").reward == -2.5
