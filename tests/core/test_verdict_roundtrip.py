import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym import ErrorKind, Outcome, RejectedFact, Verdict

json_leaf = st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.floats(allow_nan=False,
                                                                                allow_infinity=False) | st.text()
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner,
                                                                                                  max_size=4),
                          max_leaves=20)


@st.composite
def verdicts(draw):
    outcome = draw(st.sampled_from(list(Outcome)))
    return Verdict(
        outcome,
        decision=draw(st.none() | st.text(max_size=10)),
        evidence=draw(st.dictionaries(st.text(max_size=8), json_value, max_size=4)),
        components=draw(st.dictionaries(st.text(max_size=8), st.floats(0, 1), max_size=3)),
        rejected_facts=tuple(RejectedFact(draw(st.text(max_size=8)), draw(json_leaf),
                                          tuple(draw(st.lists(st.text(max_size=8), max_size=2))))
                             for _ in range(draw(st.integers(0, 2)))),
        timings=draw(st.dictionaries(st.text(max_size=8), st.floats(0, 100), max_size=3)),
        error_kind=draw(st.sampled_from(list(ErrorKind))) if outcome is Outcome.INVALID else None,
        reason=draw(st.text(max_size=20)),
        verifier=draw(st.text(max_size=10)),
    )


@settings(max_examples=300, deadline=None)
@given(verdicts())
def test_json_roundtrip_is_lossless(verdict):
    assert Verdict.from_json(verdict.to_json()) == verdict
    assert Verdict.from_dict(verdict.to_dict()) == verdict


def test_error_kind_set_exactly_for_invalid():
    with pytest.raises(ValueError):
        Verdict(Outcome.INVALID)
    with pytest.raises(ValueError):
        Verdict(Outcome.CERTIFIED, error_kind=ErrorKind.TIMEOUT)


def test_non_finite_component_is_rejected():
    with pytest.raises(ValueError, match="components"):
        Verdict(Outcome.CERTIFIED, components={"graded": math.nan})


def test_non_json_evidence_cannot_serialise():
    with pytest.raises((TypeError, ValueError)):
        Verdict(Outcome.CERTIFIED, evidence={"x": object()}).to_json()


def test_transient_error_kinds():
    assert ErrorKind.TIMEOUT.transient and ErrorKind.OUTAGE.transient
    assert not ErrorKind.CRASH.transient and not ErrorKind.BREAKER_OPEN.transient


def test_stamped_adds_timings_and_fills_an_empty_verifier_only():
    base = Verdict(Outcome.CERTIFIED, decision="permit", timings={"engine_s": 0.1})
    stamped = base.stamped("v@1", verify_s=0.2)
    assert stamped.timings == {"engine_s": 0.1, "verify_s": 0.2} and stamped.verifier == "v@1"
    assert base.timings == {"engine_s": 0.1} and base.verifier == ""
    assert Verdict(Outcome.CERTIFIED, verifier="own").stamped("v@1").verifier == "own"
    assert stamped == Verdict(Outcome.CERTIFIED, decision="permit", timings={"engine_s": 0.1, "verify_s": 0.2},
                              verifier="v@1")
