import re

import pytest

from proofgym.core import Claim
from proofgym.parsers import CompletionParser, ParseResult, RegexFactParser


def test_parses_fact_lines_and_one_answer_line():
    completion = "Let me see.\nfact age: 34\nfact resident: true\nfact city: Oslo\nanswer: Permit\n"
    assert RegexFactParser(decisions=("permit", "deny")).parse(completion) == ParseResult(
        claim=Claim(decision="permit", facts={"age": 34, "resident": True, "city": "Oslo"})
    )


def test_is_a_completion_parser():
    assert isinstance(RegexFactParser(), CompletionParser)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("34", 34),
        ("-7", -7),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("TRUE", True),
        ("false", False),
        ("null", None),
        ("None", None),
        ('"34"', "34"),
        ('"a \\"quoted\\" word"', 'a "quoted" word'),
        ("hello world", "hello world"),
        ('"unbalanced', '"unbalanced'),
        ("  padded  ", "padded"),
    ],
)
def test_values_are_json_ish_scalars(raw, value):
    claim = RegexFactParser().parse(f"fact x: {raw}\nanswer: a").claim
    assert claim.facts == {"x": value} and type(claim.facts["x"]) is type(value)


def test_answer_is_text_normalised_and_unquoted():
    assert RegexFactParser().parse('answer: "  Deny "').claim.decision == "deny"
    assert RegexFactParser().parse("answer: 42").claim.decision == "42"


def test_keywords_are_case_insensitive_and_indentation_is_allowed():
    assert RegexFactParser().parse("  FACT age: 3\n\tAnswer: deny").claim == Claim(decision="deny", facts={"age": 3})


def test_no_answer_line_is_missing_answer():
    assert RegexFactParser().parse("fact age: 3\nthe answer is deny").error.kind == "missing_answer"


def test_unknown_decision():
    assert (
        RegexFactParser(decisions=("permit", "deny")).parse("answer: <one of: permit | deny>").error.kind
        == "unknown_decision"
    )


@pytest.mark.parametrize(
    "lines",
    ["fact age: 3\nfact age: 3", "fact age:", "fact age:    ", "fact 1age: 3", "fact my-age: 3", "fact x: 1e999"],
)
def test_bad_fact_lines(lines):
    assert RegexFactParser().parse(f"{lines}\nanswer: deny").error.kind == "bad_facts"


def test_empty_answer_is_bad_answer():
    assert RegexFactParser().parse("answer:   ").error.kind == "bad_answer"


def test_custom_patterns():
    parser = RegexFactParser(
        fact_pattern=r"^(?P<name>\w+) = (?P<value>.*)$", answer_pattern=re.compile(r"^=> (?P<value>.*)$", re.M)
    )
    assert parser.parse("age = 3\n=> deny").claim == Claim(decision="deny", facts={"age": 3})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"fact_pattern": r"(?P<value>.*)"},
        {"answer_pattern": r"answer: (.*)"},
        {"answer_pattern": re.compile(rb"(?P<value>x)")},
    ],
)
def test_patterns_without_the_named_groups_fail_at_construction(kwargs):
    with pytest.raises(ValueError):
        RegexFactParser(**kwargs)
