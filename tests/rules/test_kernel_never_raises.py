"""Property tests: the gate, the engine and the kernel never raise on any input, every report is JSON-native,
and on valid facts the independent checker accepts every proof the engine writes."""

import json
import math
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofgym.rules import RuleKernel, compile_rulebook, gate, load_rulebook

from kernel_helpers import GRANT, LOAN

RULEBOOKS = [load_rulebook(GRANT), load_rulebook(LOAN)]
KERNELS = [RuleKernel(rb) for rb in RULEBOOKS]
NAMES = sorted({spec.name for rb in RULEBOOKS for spec in (*rb.facts, *rb.derived)})

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), st.sampled_from(["good", "employed", "low"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                           max_size=3), max_leaves=8)
wrapped = st.fixed_dictionaries({"value": values}, optional={"confidence": values, "extra": values})
keys = st.sampled_from(NAMES) | st.text(max_size=8) | st.integers()
fact_dicts = st.dictionaries(keys, values | wrapped, max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(facts=fact_dicts | st.lists(values, max_size=2) | values)
def test_the_kernel_never_raises_and_reports_json(facts):
    for kernel in KERNELS:
        report = kernel.query(facts)
        json.dumps(report, allow_nan=False)
        assert report["status"] in ("decided", "abstain", "indeterminate")


def spec_values(spec):
    if spec.type == "boolean":
        return st.booleans()
    if spec.type == "enum":
        return st.sampled_from(spec.values)
    if spec.type == "string":
        return st.text(max_size=spec.max_length or 20)
    # Unbounded numbers range over all finite floats, so that arithmetic overflows now and then.
    low = spec.minimum if spec.minimum is not None else -sys.float_info.max
    high = spec.maximum if spec.maximum is not None else sys.float_info.max
    integers = st.integers(math.ceil(low), math.floor(high))
    if spec.type == "integer":
        return integers | integers.map(float)  # 34.0 is the integer 34
    return integers | st.floats(low, high, allow_nan=False) | st.sampled_from([low, 0 if low <= 0 <= high else low])


@st.composite
def valid_facts(draw, rulebook):
    facts = {}
    for spec in rulebook.facts:
        if not spec.required and draw(st.booleans()):
            continue
        value = draw(spec_values(spec))
        if draw(st.booleans()):
            value = {"value": value, "confidence": draw(st.floats(max(rulebook.min_confidence, 0.8), 1.0))}
        facts[spec.name] = value
    return facts


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_proof_of_valid_facts_is_checked(data):
    for rulebook, kernel in zip(RULEBOOKS, KERNELS):
        report = kernel.query(data.draw(valid_facts(rulebook)))
        assert report["rejected_facts"] == []
        assert report["proof_checked"] is True, report["checker_problems"]
        assert report["status"] == report["proof"]["decision"]["status"]


@settings(max_examples=100, deadline=None)
@given(facts=st.dictionaries(st.sampled_from(NAMES), scalars, max_size=8))
def test_the_engine_never_raises_on_gated_facts(facts):
    for rulebook in RULEBOOKS:
        accepted, _, _ = gate(rulebook, facts)  # whatever was accepted, even with other facts rejected
        json.dumps(compile_rulebook(rulebook).evaluate(accepted), allow_nan=False)
