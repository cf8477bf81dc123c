"""Invariant 2: a certified, fully grounded, correct completion outscores every completion that is
uncertified, has a rejected fact, or is wrong -- whatever the valid config and the graded credit."""

from dataclasses import replace
from typing import Any

from hypothesis import given, settings, strategies as st
from reward_strategies import CONFIGS, WORDS, with_components

from proofgym.core import Claim, ErrorKind, RejectedFact, Verdict
from proofgym.rewards import DefaultRewardShaper, Reference, ShapedReward, ShaperConfig
from proofgym.testing import certified, invalid_verdict, refuted

MATCHABLE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    WORDS,
)
SOURCE_FACTS = st.dictionaries(st.sampled_from(["a", "b", "c", "port", "open"]), MATCHABLE, max_size=4)
GRADED = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(min_value=0, max_value=1))


@st.composite
def same_value(draw: st.DrawFn, value: Any) -> Any:
    """Another spelling of ``value`` that states the same fact, maybe as a confidence object."""
    if isinstance(value, str):
        padding = draw(st.integers(0, 4))
        value = draw(st.sampled_from([value, value.upper(), value.lower()])).center(len(value) + padding)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = draw(st.sampled_from([value, float(value)]))
    if draw(st.booleans()):
        value = {"value": value, "confidence": draw(st.floats(0, 1))}
    return value


def spellings(decision: str) -> st.SearchStrategy[str]:
    """The same decision up to case and surrounding whitespace."""
    return st.sampled_from([decision, decision.upper(), f"  {decision.lower()} "])


@st.composite
def good_completions(draw: st.DrawFn) -> tuple[Verdict, Claim, Reference]:
    """A certified decision, matching the gold answer when there is one, asserting only source facts."""
    source = draw(SOURCE_FACTS)
    asserted = draw(st.lists(st.sampled_from(sorted(source)), unique=True) if source else st.just([]))
    facts = {name: draw(same_value(source[name])) for name in asserted}
    decision = draw(WORDS)
    verdict = certified(draw(st.one_of(st.none(), spellings(decision))))
    verdict = with_components(verdict, {"graded": draw(st.one_of(st.just(0.0), GRADED))})
    claim = Claim(decision=decision, facts=facts, reasoning=draw(st.text(max_size=10)))
    gold = draw(st.one_of(st.none(), spellings(decision)))
    return verdict, claim, Reference(gold=gold, source_facts=source if draw(st.booleans()) or not facts else None)


def mismatching(value: Any) -> Any:
    """A value that states something else: bool/int confusion included."""
    if isinstance(value, dict):
        value = value["value"]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value + 1 + abs(value)  # far outside the 1e-9 relative tolerance
    if isinstance(value, str):
        return value + "x"
    return 0  # None


@st.composite
def bad_completions(draw: st.DrawFn, good: tuple[Verdict, Claim, Reference]) -> tuple[Verdict, Claim, Reference]:
    """``good`` with one or more defects: uncertified, a rejected or ungrounded fact, or a wrong decision."""
    verdict, claim, ref = good
    defect = st.sampled_from(["refuted", "other_decision", "verifier_rejects", "invented", "mismatch", "wrong_gold"])
    # Mostly a single defect: missing one tier while taking full graded credit is the closest call.
    defects = [draw(defect), *draw(st.lists(defect, max_size=2))]
    facts = dict(claim.facts)
    source = dict(ref.source_facts or {})
    gold = ref.gold
    other = draw(WORDS)
    if other.casefold() == claim.decision.casefold():
        other += "z"
    rejected = list(verdict.rejected_facts)
    for defect in defects:
        if defect == "refuted":
            verdict = refuted()
        elif defect == "other_decision":
            verdict = certified(other)
        elif defect == "verifier_rejects":
            rejected.append(RejectedFact(draw(st.sampled_from(sorted(facts) + ["required"])), None))
        elif defect == "invented":
            facts["invented"] = draw(MATCHABLE)
            ref = replace(ref, source_facts=source)
        elif defect == "mismatch":
            name = draw(st.sampled_from(["a", "b"]))
            source.setdefault(name, draw(MATCHABLE))
            facts[name] = mismatching(source[name])
            ref = replace(ref, source_facts=source)
        elif defect == "wrong_gold":
            gold = other
    # The bad completion may take any graded credit; the most is the hardest case.
    graded = draw(st.one_of(st.just(1.0), GRADED))
    verdict = with_components(replace(verdict, rejected_facts=tuple(rejected)), {"graded": graded})
    return verdict, replace(claim, facts=facts), replace(ref, gold=gold)


def assert_full_tier(shaped: ShapedReward) -> None:
    assert (shaped.components["certified"], shaped.components["correct"], shaped.components["grounded"]) == (1, 1, 1)


@settings(max_examples=1000, deadline=None)
@given(config=CONFIGS, data=st.data())
def test_certified_grounded_correct_beats_any_defective_completion(config, data):
    shaper = DefaultRewardShaper(config)
    good = data.draw(good_completions())
    bad = data.draw(bad_completions(good))
    good_shaped, bad_shaped = shaper.shape(*good), shaper.shape(*bad)
    assert_full_tier(good_shaped)
    assert 0 in (bad_shaped.components[tier] for tier in ("certified", "correct", "grounded"))
    assert good_shaped.reward > bad_shaped.reward


@settings(max_examples=300, deadline=None)
@given(config=CONFIGS, good=good_completions(), error_kind=st.sampled_from(ErrorKind))
def test_certified_grounded_correct_beats_format_failures_and_invalid_verdicts(config, good, error_kind):
    shaper = DefaultRewardShaper(config)
    good_reward = shaper.shape(*good).reward
    assert good_reward > shaper.format_failure("no answer").reward
    floor_config = ShaperConfig.model_validate({**config.model_dump(), "on_invalid": "floor"})
    floor_shaper = DefaultRewardShaper(floor_config)
    _, claim, ref = good
    assert floor_shaper.shape(*good).reward > floor_shaper.shape(invalid_verdict(error_kind), claim, ref).reward
