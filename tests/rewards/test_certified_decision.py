"""Certification counts only for the decision the claim made; a refuted right answer earns some
credit but stays below the full tier."""

from proofgym.core import Claim
from proofgym.rewards import DefaultRewardShaper
from proofgym.testing import certified, refuted

SHAPER = DefaultRewardShaper()


def components(verdict, claim, reference=None):
    shaped = SHAPER.shape(verdict, claim, reference)
    return shaped.components["certified"], shaped.components["correct"]


def test_certifying_the_claims_decision_counts_up_to_case_and_whitespace():
    assert components(certified(" YES "), Claim("yes")) == (1.0, 1.0)


def test_certifying_another_decision_is_not_certification():
    assert components(certified("no"), Claim("yes")) == (0.0, 0.0)
    assert components(certified("no"), Claim(None)) == (0.0, 0.0)


def test_a_pass_fail_verifier_certifies_whatever_was_claimed():
    assert components(certified(None), Claim("yes")) == (1.0, 1.0)


def test_without_gold_correct_follows_certification():
    assert components(refuted(), Claim("yes")) == (0.0, 0.0)


def test_with_gold_correct_is_judged_against_it():
    assert components(certified("yes"), Claim("yes"), {"gold": "no"}) == (1.0, 0.0)
    assert components(refuted(), Claim(" Yes"), {"gold": "yes"}) == (0.0, 1.0)
    assert components(refuted(), Claim(None), {"gold": "yes"}) == (0.0, 0.0)


def test_a_refuted_right_answer_earns_credit_but_less_than_the_full_tier():
    reference = {"gold": "yes"}
    refuted_right = SHAPER.shape(refuted(components={"graded": 1.0}), Claim("yes"), reference).reward
    refuted_wrong = SHAPER.shape(refuted(components={"graded": 1.0}), Claim("no"), reference).reward
    full = SHAPER.shape(certified("yes"), Claim("yes"), reference).reward
    assert refuted_wrong < refuted_right < full
