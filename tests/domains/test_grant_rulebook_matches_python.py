"""The grant rulebook decides exactly as the plain Python verifier, gate included."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofgym.core import Claim
from proofgym.domains import get_domain
from proofgym.domains.grant_rules import verify

from ._support import kernel_for

GRANT = get_domain("grant_eligibility")


@pytest.fixture(scope="module")
def kernel():
    return kernel_for(GRANT)


def _python(facts):
    verdict = verify(Claim(None, facts))
    return verdict.decision if verdict.certified else None, {r.field for r in verdict.rejected_facts}


def _rulebook(kernel, facts):
    report = kernel.query(facts)
    decision = report["decision"] if report["proof_checked"] else None
    return decision, {r["field"] for r in report["rejected_facts"]}


def test_agrees_on_generated_records(kernel):
    for seed in range(3):
        for record in GRANT.generate(seed, 2000):
            facts = dict(record.facts)
            assert _rulebook(kernel, facts) == _python(facts), facts


_incomes = st.one_of(
    st.integers(0, 100_000_000), st.integers(29_990, 30_010),
    st.floats(0, 100_000_000), st.floats(29_999.0, 30_001.0),
)
_valid = st.fixed_dictionaries({
    "age": st.one_of(st.integers(0, 130), st.integers(16, 20)),
    "annual_income": _incomes,
    "resident": st.booleans(),
    "has_active_grant": st.booleans(),
})


def _agrees_on_a_valid_record(kernel, facts):
    decision, rejected = _rulebook(kernel, facts)
    assert (decision, rejected) == _python(facts)
    assert decision is not None


# 500 random records a property by default, 3,000 under -m slow (the same property and generator: 3,000 of each cost
# about a minute of a loaded suite run; the 6,000 generated records above and the boundaries below stay default).
def _examples(count):
    return settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow])


test_agrees_on_random_valid_records = _examples(500)(given(_valid)(_agrees_on_a_valid_record))
test_agrees_on_random_valid_records_deeply = pytest.mark.slow(_examples(3000)(given(_valid)(_agrees_on_a_valid_record)))


_junk = st.one_of(
    st.none(), st.text(max_size=4), st.booleans(), st.integers(-10, 200), st.integers(100_000_000, 10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.just(34.0), st.just(34.5),
)


def _maybe_wrapped(values):
    confidence = st.one_of(st.floats(0, 1), st.just(0.8), st.just(0.79))
    return st.one_of(values, st.fixed_dictionaries({"value": values, "confidence": confidence}))


_messy = st.fixed_dictionaries(
    {},
    optional={
        "age": _maybe_wrapped(st.one_of(st.integers(0, 130), _junk)),
        "annual_income": _maybe_wrapped(st.one_of(_incomes, _junk)),
        "resident": _maybe_wrapped(st.one_of(st.booleans(), _junk)),
        "has_active_grant": _maybe_wrapped(st.one_of(st.booleans(), _junk)),
        "pet": st.just("cat"),
    },
)


def _agrees_on_a_messy_record(kernel, facts):
    """Wrong types, out-of-range values, NaN, low confidence, missing and unknown facts: both gates
    reject the same facts, and neither certifies a decision from a record it rejected."""
    assert _rulebook(kernel, facts) == _python(facts)


test_agrees_on_random_messy_records_gate_included = _examples(500)(given(_messy)(_agrees_on_a_messy_record))
test_agrees_on_random_messy_records_gate_included_deeply = pytest.mark.slow(
    _examples(3000)(given(_messy)(_agrees_on_a_messy_record)))


def test_boundaries_agree(kernel):
    base = {"age": 18, "annual_income": 30_000, "resident": True, "has_active_grant": False}
    for change in ({}, {"age": 17}, {"annual_income": 30_000.01}, {"annual_income": math.nextafter(30_000, 0)},
                   {"age": 18.0}, {"annual_income": {"value": 30_000, "confidence": 0.8}}):
        facts = {**base, **change}
        assert _rulebook(kernel, facts) == _python(facts), change
