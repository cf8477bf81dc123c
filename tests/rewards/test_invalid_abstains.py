"""Invariant 4: an invalid verdict (outage, timeout, open breaker...) never pays.

None by default, exactly the floor under on_invalid="floor", InvalidVerdictError under "raise" --
whatever the claim, the reference, or how right the answer would have been.
"""

import pytest
from hypothesis import given, settings, strategies as st
from reward_strategies import CLAIMS, CONFIGS, REFERENCES, verdicts

from proofgym.core import Claim, ErrorKind, Outcome
from proofgym.rewards import DefaultRewardShaper, InvalidVerdictError, ShaperConfig
from proofgym.testing import invalid_verdict

INVALID_VERDICTS = verdicts(outcomes=st.just(Outcome.INVALID))


@settings(max_examples=500, deadline=None)
@given(config=CONFIGS, verdict=INVALID_VERDICTS, claim=CLAIMS, reference=REFERENCES)
def test_invalid_verdict_abstains_floors_or_raises_as_configured(config, verdict, claim, reference):
    shaper = DefaultRewardShaper(config)
    if config.on_invalid == "raise":
        with pytest.raises(InvalidVerdictError) as raised:
            shaper.shape(verdict, claim, reference)
        assert raised.value.verdict is verdict
        return
    shaped = shaper.shape(verdict, claim, reference)
    assert shaped.outcome == "invalid"
    assert shaped.reward == (None if config.on_invalid == "abstain" else config.floor)
    assert not any(shaped.components.values()) and not any(shaped.contributions.values())
    assert verdict.error_kind.value in shaped.reason


@pytest.mark.parametrize("error_kind", list(ErrorKind))
def test_an_outage_never_pays_even_with_the_gold_answer(error_kind):
    claim = Claim("yes", facts={"port": 22})
    reference = {"gold": "yes", "source_facts": {"port": 22}}
    shaped = DefaultRewardShaper().shape(invalid_verdict(error_kind), claim, reference)
    assert shaped.reward is None
    assert shaped.outcome == "invalid"
    assert error_kind.value in shaped.reason


def test_floor_mode_scores_an_outage_at_the_floor_not_above():
    shaper = DefaultRewardShaper(ShaperConfig(on_invalid="floor"))
    shaped = shaper.shape(invalid_verdict(ErrorKind.BREAKER_OPEN), Claim("yes"), {"gold": "yes"})
    assert shaped.reward == shaper.bounds[0]


def test_raise_mode_raises_with_the_error_kind():
    shaper = DefaultRewardShaper(ShaperConfig(on_invalid="raise"))
    with pytest.raises(InvalidVerdictError, match="rate_limited"):
        shaper.shape(invalid_verdict(ErrorKind.RATE_LIMITED, "503"), Claim("yes"))
