import pytest

from proofgym.parsers import RegexFactParser


def test_two_different_answers_fail(parser, block):
    result = parser.parse(f"{block('permit')}\n{block('deny')}")
    assert result.error.kind == "multiple_decision_blocks"


def test_the_same_answer_twice_fails(parser, block):
    result = parser.parse(f"{block('permit', {'age': 1})} or {block('permit', {'age': 1})}")
    assert result.error.kind == "multiple_decision_blocks"


def test_a_block_inside_the_reasoning_counts(parser, block):
    result = parser.parse(f"<reasoning>Maybe {block('deny')}?</reasoning>{block('permit')}")
    assert result.error.kind == "multiple_decision_blocks"


def test_an_invalid_second_block_still_counts(parser, block):
    result = parser.parse(f"{block('permit')}<decision>not json</decision>")
    assert result.error.kind == "multiple_decision_blocks"


def test_blocks_in_several_assistant_messages_count_together(parser, block):
    completion = [{"role": "assistant", "content": block("permit")}, {"role": "assistant", "content": block("deny")}]
    assert parser.parse(completion).error.kind == "multiple_decision_blocks"


def test_an_unterminated_block_counts_as_none(parser, block):
    assert parser.parse(f'{block("permit")}<decision>{{"classification": "deny"}}').claim.decision == "permit"
    assert parser.parse('<decision>{"classification": "deny"}').error.kind == "no_decision_block"


@pytest.mark.parametrize("completion", ["permit", "classification: permit", '{"classification": "permit"}'])
def test_no_block_is_no_decision_block(parser, completion):
    assert parser.parse(completion).error.kind == "no_decision_block"


@pytest.mark.parametrize("answers", [("permit", "deny"), ("permit", "permit")])
def test_several_answer_lines_fail_the_regex_parser(answers):
    completion = "\n".join(f"answer: {answer}" for answer in answers)
    assert RegexFactParser().parse(completion).error.kind == "multiple_decision_blocks"
