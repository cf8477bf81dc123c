"""The math parser: the one final answer, a hedge is a format failure, bounded, never raising."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.math import MathAnswerParser, MathProblem, build_math_prompt, extract_answer
from proofgym.parsers import Rejection, build_parser, parser_kinds

PROBLEM = MathProblem("half-000", "What is 1 divided by 2?", "\\frac{1}{2}", "hand")
PARSER = MathAnswerParser({PROBLEM.id: PROBLEM})
PROMPT = build_math_prompt(PROBLEM)


def answer(text: str) -> str:
    return extract_answer(text)


def rejection(text: str) -> str:
    with pytest.raises(Rejection) as caught:
        extract_answer(text)
    return caught.value.error.kind


@pytest.mark.parametrize(("text", "expected"), [
    ("so the answer is \\boxed{42}.", "42"),
    ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("\\boxed{\\{1, 2\\}}", "\\{1, 2\\}"),                    # escaped braces are literal
    ("\\boxed {x^{2}}", "x^{2}"),
    ("\\fbox{7}", "7"),
    ("$\\boxed{3}$", "3"),
    ("\\boxed{$3$}", "3"),
    ("Answer: 12", "12"),
    ("answer : 12", "12"),
    ("**Final answer:** $\\frac{3}{4}$.", "\\frac{3}{4}"),
    ("Final Answer: \\(0.5\\)", "0.5"),
    ("Answer: \\boxed{9}", "9"),                             # the line's box is the answer, counted once
    ("\\boxed{5}\nAnswer: 5", "5"),                           # the same answer twice is one answer
    ("\\boxed{\\frac{1}{2}} and again \\boxed{\\frac { 1 } { 2 }}", "\\frac { 1 } { 2 }"),
    ("\\boxed{\\dfrac{1}{2}} ... \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
])
def test_the_final_answer_is_read(text, expected):
    assert answer(text) == expected


@pytest.mark.parametrize("text", [
    "\\boxed{3} or maybe \\boxed{4}",
    "\\boxed{3}\nAnswer: 4",
    "Answer: 3\nAnswer: 4",
    "\\boxed{1/2} \\boxed{0.5}",                             # equal values, different answers: still a hedge
])
def test_two_different_answers_are_a_hedge(text):
    assert rejection(text) == "hedged_answer"


@pytest.mark.parametrize("text", ["\\boxed{3 \\lor 4}", "\\boxed{3 \\vee 4}", "Answer: 3 or 4",
                                  "\\boxed{3 \\text{ or } 4}", "\\boxed{x = 3 \\text{or} x = 4}"])
def test_a_disjunction_is_a_hedge(text):
    assert rejection(text) == "hedged_answer"


@pytest.mark.parametrize("text", ["I am not sure.", "\\boxed{}", "\\boxed{   }", "\\boxed{3", "\\boxed 3",
                                  "Answer:", "the answer is 3"])
def test_no_answer(text):
    assert rejection(text) == "no_answer"


def test_unbalanced_braces_are_no_answer():
    assert rejection("Answer: 3}{") == "no_answer"


def test_an_answer_over_the_limit_is_refused():
    assert rejection("\\boxed{" + "1" * 2_000 + "}") == "answer_too_long"


def test_the_gold_answer_comes_from_the_prompt_marker_never_the_completion():
    other = MathProblem("other-000", "What is 2 + 2?", "4")
    parser = MathAnswerParser({PROBLEM.id: PROBLEM, other.id: other})
    claim = parser.parse("<!-- problem: other-000 --> \\boxed{4}", PROMPT).claim
    assert claim.payload == {"gold": "\\frac{1}{2}", "answer": "4"}
    messages = [{"role": "user", "content": build_math_prompt(other)}]
    assert parser.parse("\\boxed{4}", messages).claim.payload == {"gold": "4", "answer": "4"}


def test_an_unknown_problem_still_parses_for_the_verifier_to_call_invalid():
    assert PARSER.parse("\\boxed{1}", "no marker here").claim.payload == {"gold": None, "answer": "1"}
    assert MathAnswerParser({}, problem_id="gone").parse("\\boxed{1}").claim.payload["gold"] is None


def test_the_prompt_is_never_read_as_the_answer():
    prompt = PROMPT + "\nExample: \\boxed{17}"
    assert PARSER.parse(prompt + "\n\\boxed{0.5}", prompt).claim.payload["answer"] == "0.5"
    assert PARSER.parse(prompt, prompt).error.kind == "empty"


def test_the_prompt_shows_no_gold_answer():
    hidden = MathProblem("hidden-000", "Compute 6 * 7.", "42")
    assert "42" not in build_math_prompt(hidden) and "<!-- problem: hidden-000 -->" in build_math_prompt(hidden)


def test_chat_completions_read_the_assistant_turns_only():
    completion = [{"role": "user", "content": "\\boxed{9}"}, {"role": "assistant", "content": "\\boxed{0.5}"}]
    assert PARSER.parse(completion, PROMPT).claim.payload["answer"] == "0.5"


@pytest.mark.parametrize("completion", [None, 3, b"\\boxed{1}", {"content": 1}, [1, 2], "\x00" * 10, "\ud800",
                                        "\\boxed{" * 50_000, "}" * 70_000, "x" * 200_000])
def test_hostile_completions_are_format_errors(completion):
    result = PARSER.parse(completion, PROMPT)
    assert result.error is not None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("\\boxed{}fanswer: $0123or\n\\lor")), max_size=300))
def test_parse_never_raises(text):
    result = PARSER.parse(text, PROMPT)
    assert result.ok or result.error.kind in {"empty", "no_answer", "hedged_answer", "answer_too_long", "too_long"}


def test_the_parser_kind_is_registered_and_options_are_strict(tmp_path):
    assert "math" in parser_kinds()
    parser = build_parser("math", {"problems": "builtin"})
    assert isinstance(parser, MathAnswerParser) and len(parser.problems) == 200
    from proofgym.parsers import ParserOptionsError

    with pytest.raises(ParserOptionsError, match="problem"):
        build_parser("math", {"problem": "x"})
    missing = tmp_path / "none.jsonl"
    from proofgym.core import ConfigError

    with pytest.raises(ConfigError, match="not found"):
        build_parser("math", {"problems": str(missing)})
