"""The one rule for untrusted text and data: whatever comes in, UTF-8, strict JSON and hashing accept what
comes out, the same input always gives the same output, and clean input passes through untouched."""

from __future__ import annotations

import hashlib
import json

from _untrusted import ANY_CHARACTER, UNTRUSTED_JSON, UNTRUSTED_TEXT, nested
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.core import Claim, bounded_json, model_text, text_bytes
from proofgym.core._limits import MAX_DEPTH


@given(UNTRUSTED_TEXT)
def test_model_text_is_always_encodable_idempotent_and_keeps_length_or_less(text):
    clean = model_text(text)
    clean.encode("utf-8")
    assert "\x00" not in clean
    assert model_text(clean) == clean
    assert len(clean) <= len(text)
    assert text_bytes(text) == clean.encode("utf-8")


@given(st.text(st.characters(codec="utf-8", exclude_characters="\x00")))
def test_clean_text_is_returned_as_is(text):
    assert model_text(text) is text


def test_lone_surrogates_and_nul_become_the_replacement_character_and_pairs_join():
    assert model_text("a\ud800b\udc00c\x00") == "a\ufffdb\ufffdc\ufffd"
    assert model_text("\ud83d\ude00") == "\U0001f600"  # a pair written as two code units is the character
    assert model_text("\ude00\ud83d") == "\ufffd\ufffd"  # reversed, it is two lone halves
    assert model_text("tab\tesc\x1bnewline\n") == "tab\tesc\x1bnewline\n"  # other controls are what it wrote


@settings(max_examples=300)
@given(UNTRUSTED_JSON)
def test_bounded_json_always_encodes_strictly_and_is_idempotent(value):
    clean = bounded_json(value)
    text = json.dumps(clean, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    assert bounded_json(clean) == clean
    assert json.loads(text) == clean


@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False,
                                                                                          allow_infinity=False),
                              st.text(st.characters(codec="utf-8", exclude_characters="\x00"))),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3).map(model_text), c,
                                                                         max_size=3), max_leaves=10))
def test_clean_data_is_returned_uncopied(value):
    assert bounded_json(value) is value


def test_what_cannot_be_encoded_is_described():
    assert bounded_json(float("nan")) == "nan" and bounded_json(-float("inf")) == "-inf"
    assert bounded_json(10**5000).startswith("<integer of about 5001 digits")
    assert bounded_json({1: "a", None: "b", (1, 2): "c"}) == {"1": "a", "null": "b", "(1, 2)": "c"}
    deep = bounded_json(nested(MAX_DEPTH + 10))
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    assert depth == MAX_DEPTH and "nested deeper" in deep
    assert bounded_json(nested(MAX_DEPTH)) == nested(MAX_DEPTH)
    assert bounded_json(b"\xff") == "b'\\xff'" and bounded_json((1, "\ud800")) == [1, "\ufffd"]


@given(st.dictionaries(st.text(ANY_CHARACTER, max_size=3), UNTRUSTED_TEXT, max_size=3), UNTRUSTED_TEXT)
def test_a_claim_with_any_text_hashes(facts, decision):
    claim = Claim(decision=decision, facts=facts, payload={"design": decision})
    assert claim.key() == hashlib.sha256(text_bytes(claim.canonical())).hexdigest()


@settings(max_examples=300)
@given(UNTRUSTED_JSON, st.integers(1, 70))
def test_the_fast_check_and_the_walk_agree(value, max_depth):
    """bounded_json decides in C code that most data is clean; where it says so, the walk changes nothing."""
    from proofgym.core._text import _already_clean, _clean

    if _already_clean(value, max_depth):
        cleaned, changed = _clean(value, max_depth)
        assert not changed or cleaned == value  # only tuples / key types differ, which every encoder takes


def test_depth_is_bounded_on_the_fast_path_too():
    for depth in (63, 64, 65, 100):
        value = {"a": [nested(depth - 2), {"text": "[[[[[[ inside a string ]]]]]]" * 20}]}
        assert (bounded_json(value) is value) == (depth <= MAX_DEPTH)


def test_the_integer_limit_is_exact():
    """1,000 digits are kept, 1,001 described: decided by comparing with 10**1000, not from the bit length."""
    assert bounded_json([10**1000 - 1, -(10**1000 - 1)]) == [10**1000 - 1, -(10**1000 - 1)]
    assert bounded_json([10**1000])[0].startswith("<integer of about 1001 digits")
