"""Reference.from_value reads a reference from None, a Reference or a dataset row."""

import re

import pytest

from proofgym.rewards import Reference


def test_none_is_an_empty_reference():
    assert Reference.from_value(None) == Reference()


def test_a_reference_is_returned_as_is():
    reference = Reference(gold="yes")
    assert Reference.from_value(reference) is reference


def test_a_row_with_canonical_keys():
    assert Reference.from_value({"gold": "yes", "source_facts": {"port": 22}}) == Reference("yes", {"port": 22})


def test_a_row_with_aliases_and_unrelated_columns():
    row = {"answer": "no", "facts": {"open": True}, "question": "Is it open?", "id": 7}
    assert Reference.from_value(row) == Reference(gold="no", source_facts={"open": True})


def test_missing_or_null_keys_mean_unknown():
    assert Reference.from_value({"prompt": "x", "answer": None}) == Reference()


def test_a_key_and_its_alias_may_agree():
    assert Reference.from_value({"gold": "yes", "answer": "yes"}).gold == "yes"


def test_a_key_and_its_alias_must_not_disagree():
    with pytest.raises(ValueError, match="'gold' and 'answer' both set gold but disagree"):
        Reference.from_value({"gold": "yes", "answer": "no"})


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ({"gold": 42}, "reference key 'gold' must be a string or None, got int: 42"),
        ({"answer": True}, "reference key 'answer' must be a string or None, got bool"),
        ({"answer": "  "}, "reference key 'answer' must not be blank"),
        ({"source_facts": [1, 2]}, "key 'source_facts' must be a mapping of fact name to value or None, got list"),
        ({"facts": "port=22"}, "reference key 'facts' must be a mapping"),
        ({"facts": {22: "port"}}, "reference key 'facts' must have string fact names"),
    ],
)
def test_a_known_key_with_the_wrong_type_is_refused_by_name(row, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        Reference.from_value(row)


def test_direct_construction_is_checked_too():
    with pytest.raises(ValueError, match="'gold' must be a string"):
        Reference(gold=1)


def test_anything_else_is_a_type_error():
    with pytest.raises(TypeError, match="None, a Reference or a mapping, got str"):
        Reference.from_value("yes")


def test_source_facts_are_copied_so_the_row_cannot_change_the_reference():
    facts = {"port": 22}
    reference = Reference.from_value({"facts": facts})
    facts["port"] = 23
    assert reference.source_facts == {"port": 22}
