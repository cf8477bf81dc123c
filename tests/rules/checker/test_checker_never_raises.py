"""Whatever it is given, the checker answers with a list of problems: garbage is rejected, never raised."""

import math
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.rules._checker import check_proof

from ._strategies import GARBAGE, same, tampered
from ._support import GRANT_PROOFS, grant_proof

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
_KEYS = ("rulebook", "inputs", "firings", "defaults", "facts", "constraints", "candidates", "decision")


def _rejected(rulebook, proof) -> bool:
    problems = check_proof(rulebook, proof)
    assert type(problems) is list and all(type(problem) is str for problem in problems)
    return bool(problems)


@settings(max_examples=300, deadline=None)
@given(proof=_JSON)
def test_arbitrary_json_is_rejected(proof):
    assert _rejected(grant_proof("permit")[0], proof)


@settings(max_examples=200, deadline=None)
@given(parts=st.fixed_dictionaries({key: _JSON for key in _KEYS}))
def test_a_proof_shaped_mapping_of_garbage_is_rejected(parts):
    assert _rejected(grant_proof("permit")[0], parts)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), case=st.sampled_from(GRANT_PROOFS), key=st.sampled_from(_KEYS))
def test_garbage_in_place_of_any_part_is_rejected(data, case, key):
    rulebook, proof = grant_proof(case)
    original = proof[key]
    proof[key] = data.draw(_JSON | GARBAGE)
    if not same(proof[key], original):
        assert _rejected(rulebook, proof)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), case=st.sampled_from(GRANT_PROOFS))
def test_repeated_tampering_never_raises(data, case):
    rulebook, proof = grant_proof(case)
    for _ in range(data.draw(st.integers(1, 5))):
        proof = data.draw(tampered(proof)) if isinstance(proof, dict) else proof
    _rejected(rulebook, proof)


class _Hostile(Mapping):
    """A mapping that fails on every access."""

    def __getitem__(self, key):
        raise RuntimeError("hostile")

    def __iter__(self):
        raise RuntimeError("hostile")

    def __len__(self):
        return 8


class _BadEquality:
    def __eq__(self, other):
        raise RuntimeError("hostile")

    __hash__ = object.__hash__


def _nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _with(case, path, value):
    rulebook, proof = grant_proof(case)
    node = proof
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return rulebook, proof


@pytest.mark.parametrize("rulebook, proof", [
    (grant_proof("permit")[0], None),
    (grant_proof("permit")[0], "a proof"),
    (grant_proof("permit")[0], b"{}"),
    (grant_proof("permit")[0], _Hostile()),
    (grant_proof("permit")[0], {key: _Hostile() for key in _KEYS}),
    (grant_proof("permit")[0], {key: _nested(100_000) for key in _KEYS}),
    _with("permit", ["inputs"], _Hostile()),
    _with("permit", ["inputs", "age"], _BadEquality()),
    _with("permit", ["firings", 0], _BadEquality()),
    _with("permit", ["firings", 0, "premises"], _Hostile()),
    _with("permit", ["facts", "age"], _BadEquality()),
    _with("permit", ["decision"], _BadEquality()),
    _with("permit", ["inputs", "income"], math.nan),
    _with("permit", ["inputs", "income"], 10 ** 400),  # an int too large for a float division
    _with("permit", ["firings"], {0: "adult"}),
    _with("permit", ["facts"], {("age",): 34}),
    _with("permit", ["candidates"], {"permit_low_income"}),
    _with("permit", ["firings", 0, "rule"], ["adult"]),  # unhashable where a name belongs
    (None, grant_proof("permit")[1]),  # not a rulebook at all
    ("grant", grant_proof("permit")[1]),
], ids=lambda value: type(value).__name__)
def test_hostile_values_are_rejected_not_raised(rulebook, proof):
    assert _rejected(rulebook, proof)
