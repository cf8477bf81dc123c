import pytest

from proofgym.core import Claim
from proofgym.parsers import CompletionParser, JSONBlockParser, ParseResult


def error_kind(result: ParseResult) -> str | None:
    return None if result.error is None else result.error.kind


def test_parses_reasoning_then_one_decision_block(parser, block):
    completion = f"<reasoning>Age 34, resident.</reasoning>\n{block('permit', {'age': 34, 'resident': True})}"
    assert parser.parse(completion) == ParseResult(
        claim=Claim(decision="permit", facts={"age": 34, "resident": True}, reasoning="Age 34, resident.")
    )


def test_is_a_completion_parser(parser):
    assert isinstance(parser, CompletionParser)


@pytest.mark.parametrize("answer", ["Permit", "  PERMIT\n", "permit"])
def test_answer_is_stripped_and_casefolded(parser, block, answer):
    assert parser.parse(block(answer)).claim.decision == "permit"


def test_decisions_are_normalised_like_answers(block):
    parser = JSONBlockParser(decisions=(" Permit ", "DENY"))
    assert parser.decisions == frozenset({"permit", "deny"})
    assert parser.parse(block("deny")).claim.decision == "deny"


@pytest.mark.parametrize("answer", ["maybe", "<one of: permit | deny>", "permit or deny", "permit, deny"])
def test_answer_outside_the_decisions_is_unknown_decision(parser, block, answer):
    assert error_kind(parser.parse(block(answer))) == "unknown_decision"


def test_without_decisions_any_answer_is_accepted(block):
    assert JSONBlockParser().parse(block("Anything At All")).claim.decision == "anything at all"


@pytest.mark.parametrize("answer", [None, 1, 1.5, True, ["permit"], {"x": "permit"}, "", "   "])
def test_non_string_or_empty_answer_is_bad_answer(parser, block, answer):
    assert error_kind(parser.parse(block(answer))) == "bad_answer"


def test_missing_answer_key(parser):
    assert error_kind(parser.parse('<decision>{"facts": {}}</decision>')) == "missing_answer"


@pytest.mark.parametrize("body", ['["permit"]', '"permit"', "1", "null", "true"])
def test_json_that_is_not_an_object(parser, body):
    assert error_kind(parser.parse(f"<decision>{body}</decision>")) == "not_an_object"


@pytest.mark.parametrize(
    "body",
    [
        "",
        "permit",
        "{'classification': 'permit'}",
        '{"classification": "permit",}',
        '{"classification": "permit"} trailing',
        '{"classification": "permit", "facts": {"x": NaN}}',
        '{"classification": "permit", "facts": {"x": Infinity}}',
        '{"classification": "permit", "facts": {"x": -Infinity}}',
        '{"classification": "deny", "classification": "permit"}',
        '{"classification": "permit", "facts": {"x": 1, "x": 2}}',
    ],
)
def test_invalid_json(parser, body):
    assert error_kind(parser.parse(f"<decision>{body}</decision>")) == "invalid_json"


def test_keys_other_than_answer_and_facts_are_ignored(parser, block):
    claim = parser.parse(block("deny", {"a": 1}, proof_checked=True, mismatches=0)).claim
    assert claim == Claim(decision="deny", facts={"a": 1})


def test_custom_keys_and_tag():
    parser = JSONBlockParser(answer_key="verdict", facts_key="evidence", tag="answer", decisions=("yes", "no"))
    claim = parser.parse('<answer>{"verdict": "YES", "evidence": {"n": 2}}</answer>').claim
    assert claim == Claim(decision="yes", facts={"n": 2})
    assert parser.parse('<decision>{"verdict": "yes"}</decision>').error.kind == "no_decision_block"


def test_tags_match_case_insensitively(parser):
    assert parser.parse('<DECISION>{"classification": "deny"}</Decision>').claim.decision == "deny"


def test_an_opening_tag_mentioned_in_prose_does_not_swallow_the_block(parser, block):
    completion = f"<reasoning>I will now write the <decision> tag.</reasoning>\n{block('deny')}"
    assert parser.parse(completion).claim.decision == "deny"


def test_chat_format_completion(parser, block):
    completion = [{"role": "assistant", "content": [{"type": "text", "text": block("deny")}]}]
    assert parser.parse(completion).claim.decision == "deny"


def test_payload_is_empty(parser, block):
    assert parser.parse(block("permit", {"a": 1})).claim.payload == {}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tag": ""},
        {"tag": "has space"},
        {"tag": "<decision>"},
        {"reasoning_tag": "decision"},
        {"answer_key": "facts"},
        {"decisions": "permit"},
        {"decisions": ["permit", ""]},
        {"limits": {"max_facts": 3}},
    ],
)
def test_misconfiguration_fails_at_construction(kwargs):
    with pytest.raises((ValueError, TypeError)):
        JSONBlockParser(**kwargs)
