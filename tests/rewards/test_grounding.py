"""Grounding: a fact is rejected when the verifier rejects it or the source disagrees; each rejected
fact counts once, and the rejected fraction lies in [0, 1]."""

import pytest
from hypothesis import given, settings, strategies as st
from reward_strategies import CLAIMS, SOURCE_FACTS, verdicts

from proofgym.core import Claim, Outcome
from proofgym.rewards import DefaultRewardShaper, Reference
from proofgym.testing import certified, refuted

SHAPER = DefaultRewardShaper()


def grounding(claim_facts, source_facts, verdict=None):
    claim = Claim("yes", facts=claim_facts)
    shaped = SHAPER.shape(verdict or certified("yes"), claim, Reference(source_facts=source_facts))
    return shaped.components["grounded"], shaped.components["rejected"], shaped.rejected_facts


@pytest.mark.parametrize(
    ("asserted", "source"),
    [
        (True, 1),
        (1, True),
        (False, 0),
        (0, False),
        (34, "34"),
        ("yes", True),
        (None, 0),
        (None, ""),
        (0, None),
        (float("nan"), float("nan")),
        (34, 35),
        ("ssh", "sshd"),
        ([1, 2], [1, True]),
    ],
)
def test_values_that_state_something_else_are_ungrounded(asserted, source):
    assert grounding({"x": asserted}, {"x": source}) == (0.0, 1.0, ("x",))


@pytest.mark.parametrize(
    ("asserted", "source"),
    [
        (34, 34.0),
        (34.0, 34),
        (0.1 + 0.2, 0.3),
        (10**30, 1e30),
        (True, True),
        (" SSH ", "ssh"),
        (None, None),
        ({"value": 22, "confidence": 0.9}, 22),
        (22, {"value": 22.0, "confidence": 1.0}),
        ([1, "A"], [1.0, "a"]),
    ],
)
def test_values_that_state_the_same_fact_are_grounded(asserted, source):
    assert grounding({"x": asserted}, {"x": source}) == (1.0, 0.0, ())


def test_a_fact_absent_from_the_source_is_an_invention():
    assert grounding({"port": 22, "invented": 1}, {"port": 22}) == (0.0, 0.5, ("invented",))


def test_a_fact_rejected_by_the_verifier_and_ungrounded_counts_once():
    verdict = refuted(rejected={"port": 22})
    _, fraction, rejected = grounding({"port": 22, "open": True}, {"port": 21, "open": True}, verdict)
    assert rejected == ("port",)
    assert fraction == 0.5


def test_a_required_fact_the_claim_never_asserted_still_ungrounds_it():
    verdict = certified("yes", rejected_facts=refuted(rejected={"hostname": None}).rejected_facts)
    assert grounding({}, None, verdict) == (0.0, 1.0, ("hostname",))


def test_the_rejected_fraction_is_capped_at_one():
    verdict = refuted(rejected={"a": 1, "b": 2, "c": 3})
    assert grounding({"a": 1}, None, verdict) == (0.0, 1.0, ("a", "b", "c"))


def test_without_a_source_only_the_verifier_can_reject_facts():
    assert grounding({"port": 22, "open": True}, None) == (1.0, 0.0, ())


@settings(max_examples=500, deadline=None)
@given(
    verdict=verdicts(outcomes=st.sampled_from([Outcome.CERTIFIED, Outcome.REFUTED])),
    claim=CLAIMS,
    source=SOURCE_FACTS,
)
def test_rejected_facts_are_the_union_counted_once(verdict, claim, source):
    shaped = SHAPER.shape(verdict, claim, Reference(source_facts=source))
    expected = {r.field for r in verdict.rejected_facts}
    if source is not None:
        expected |= {name for name in claim.facts if name not in source}
    assert expected <= set(shaped.rejected_facts)
    assert len(shaped.rejected_facts) == len(set(shaped.rejected_facts))
    assert shaped.components["rejected"] == min(1.0, len(shaped.rejected_facts) / max(1, len(claim.facts)))
    assert shaped.components["grounded"] == (0.0 if shaped.rejected_facts else 1.0)
