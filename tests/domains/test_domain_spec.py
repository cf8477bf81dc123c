import json

import pytest

from proofgym.domains import DomainSpec


def make(**overrides):
    fields = {"name": "d", "description": "Decide.", "decisions": ("yes", "no"), "facts": {"n": "integer"}}
    return DomainSpec(**{**fields, **overrides})


def test_spec_is_immutable_and_hashable():
    facts = {"n": "integer"}
    spec = make(decisions=["yes", "no"], facts=facts)
    facts["m"] = "added later"
    assert spec.decisions == ("yes", "no")
    assert dict(spec.facts) == {"n": "integer"}
    with pytest.raises(TypeError):
        spec.facts["x"] = "y"
    assert hash(spec) == hash(make())


def test_parser_matches_the_spec():
    spec = make(answer_key="verdict", facts_key="evidence", tag="answer", reasoning_tag="think")
    body = json.dumps({"verdict": "Yes", "evidence": {"n": 3}})
    claim = spec.parser().parse(f"<think>hm</think><answer>{body}</answer>").claim
    assert (claim.decision, dict(claim.facts), claim.reasoning) == ("yes", {"n": 3}, "hm")
    assert spec.parser(require_facts=True).require_facts


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": ""},
        {"description": "  "},
        {"decisions": ()},
        {"decisions": ("yes", "YES")},
        {"decisions": ("yes", "")},
        {"decisions": ("x" * 600,)},
        {"facts": {"not an identifier": "integer"}},
        {"facts": {f"f{i}": "integer" for i in range(65)}},
        {"tag": "two words"},
        {"answer_key": "facts"},
        {"reasoning_tag": "decision"},
    ],
)
def test_a_spec_whose_answers_cannot_parse_is_refused(overrides):
    with pytest.raises((ValueError, TypeError)):
        make(**overrides)
