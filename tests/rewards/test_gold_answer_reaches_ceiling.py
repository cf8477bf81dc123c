"""A certified gold answer with grounded facts earns every credit: the ceiling, or just below it
by the graded credit it missed."""

import pytest

from proofgym.core import Claim
from proofgym.rewards import DefaultRewardShaper
from proofgym.testing import certified

CLAIM = Claim("Yes", facts={"port": 22, "open": {"value": True, "confidence": 0.8}, "service": "SSH"})
REFERENCE = {"answer": "yes", "facts": {"port": 22.0, "open": True, "service": "ssh"}, "question": "Is SSH open?"}


def test_full_graded_credit_reaches_the_ceiling():
    shaper = DefaultRewardShaper()
    shaped = shaper.shape(certified("YES", components={"graded": 1.0}), CLAIM, REFERENCE)
    assert shaped.reward == pytest.approx(shaper.bounds[1])
    assert shaped.outcome == "certified"
    assert shaped.rejected_facts == ()


def test_without_graded_credit_it_misses_only_the_graded_weight():
    shaper = DefaultRewardShaper()
    shaped = shaper.shape(certified("yes"), CLAIM, REFERENCE)
    assert shaped.reward == pytest.approx(shaper.bounds[1] - shaper.config.weights.graded)
