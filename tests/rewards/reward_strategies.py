"""Hypothesis strategies shared by the reward tests: verdicts, claims, references, valid configs."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import reject, strategies as st
from pydantic import ValidationError

from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict
from proofgym.rewards import Reference, ShaperConfig

# Few names, so claim facts, source facts and verifier rejections overlap often.
FACT_NAMES = st.sampled_from(["a", "b", "c", "port", "open", "count"])

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(),
    st.floats(),  # includes NaN and +/-inf
    st.text(max_size=4),
)
FACT_VALUES = st.one_of(SCALARS, st.fixed_dictionaries({"value": SCALARS, "confidence": st.floats()}))
FACTS = st.dictionaries(FACT_NAMES, FACT_VALUES, max_size=5)

DECISIONS = st.one_of(st.none(), st.sampled_from(["yes", "no", " Yes ", "NO", "maybe"]), st.text(max_size=3))
GOLDS = st.one_of(
    st.none(), st.sampled_from(["yes", "no", " Maybe "]), st.text(min_size=1, max_size=3).filter(str.strip)
)

# What a verifier might put in its components, including what Verdict's own check would refuse.
COMPONENT_VALUES = st.one_of(
    st.floats(min_value=0, max_value=1),
    st.floats(),
    st.integers(),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), -1.0, 1e308, 10**400, True, "1"]),
)


def with_components(verdict: Verdict, components: dict[str, Any]) -> Verdict:
    """``verdict`` carrying ``components`` unchecked: a shaper must survive a verifier that bypassed
    Verdict's validation (or mutated the mapping after construction)."""
    object.__setattr__(verdict, "components", components)
    return verdict


@st.composite
def verdicts(draw: st.DrawFn, outcomes: st.SearchStrategy[Outcome] = st.sampled_from(Outcome)) -> Verdict:
    """Random verdicts of any outcome, with random decisions, rejected facts and components."""
    outcome = draw(outcomes)
    rejected = draw(st.lists(st.builds(RejectedFact, FACT_NAMES, SCALARS), max_size=4))
    verdict = Verdict(
        outcome,
        decision=draw(DECISIONS),
        rejected_facts=tuple(rejected),
        error_kind=draw(st.sampled_from(ErrorKind)) if outcome is Outcome.INVALID else None,
        reason=draw(st.text(max_size=8)),
    )
    components = draw(st.dictionaries(st.sampled_from(["graded", "score", "other"]), COMPONENT_VALUES, max_size=3))
    return with_components(verdict, components)


CLAIMS = st.builds(Claim, decision=DECISIONS, facts=FACTS, reasoning=st.one_of(st.none(), st.text(max_size=20)))
SOURCE_FACTS = st.one_of(st.none(), FACTS)
REFERENCES = st.one_of(
    st.none(),
    st.builds(Reference, gold=GOLDS, source_facts=SOURCE_FACTS),
    # A dataset row: aliases, and columns that are not the reference's business.
    st.fixed_dictionaries({"answer": GOLDS, "facts": SOURCE_FACTS, "question": st.text(max_size=5)}),
)


def _finite(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


@st.composite
def configs(draw: st.DrawFn) -> ShaperConfig:
    """Random valid shaper configs, drawn up to and past the validator's limits and kept when it accepts."""
    certified, correct, grounded = (draw(_finite(1e-6, 100)) for _ in range(3))
    # Up to and past the smallest tier weight: the validator, not this strategy, must keep the invariant.
    graded = draw(st.one_of(st.just(1.0), _finite(0, 1.2))) * min(certified, correct, grounded)
    penalty = draw(_finite(0, 100))
    try:
        return ShaperConfig(
            weights={
                "format": draw(_finite(0, 100)),
                "certified": certified,
                "correct": correct,
                "grounded": grounded,
                "graded": graded,
            },
            penalties={"rejected": penalty},
            floor=-penalty - draw(_finite(0, 100)),
            on_invalid=draw(st.sampled_from(["abstain", "floor", "raise"])),
            graded_component=draw(st.sampled_from(["graded", "score"])),
        )
    except ValidationError:
        reject()  # graded drawn at or past the smallest tier weight


CONFIGS = st.one_of(st.just(ShaperConfig()), configs())

# Strings that survive strip().casefold() variants predictably.
WORDS = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=6)
