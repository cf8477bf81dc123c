import pytest

from proofgym.parsers import find_blocks
from proofgym.domains import DomainSpec, build_system_prompt, check_system_prompt


def test_built_prompt_passes_the_check(spec):
    assert check_system_prompt(build_system_prompt(spec), spec) == []


def test_built_prompt_passes_the_check_with_custom_format_names():
    spec = DomainSpec(
        name="triage",
        description="Triage the ticket.",
        decisions=("bug", "feature request"),
        facts={},
        answer_key="label",
        facts_key="evidence",
        tag="answer",
        reasoning_tag="think",
    )
    prompt = build_system_prompt(spec)
    assert check_system_prompt(prompt, spec) == []
    assert "<answer>" in prompt and "<think>" in prompt and '"label"' in prompt


def test_prompt_states_the_contract(spec):
    prompt = build_system_prompt(spec)
    assert prompt.startswith(spec.description)
    assert "exactly one <decision> block" in prompt
    assert "Several <decision> blocks score as a format failure" in prompt
    for text in (
        '"permit"',
        '"deny"',
        '"refer"',
        "integer, the applicant's age in years",
        "boolean, lives in the city",
    ):
        assert text in prompt


def test_prompt_has_exactly_one_example_block_with_placeholders(spec):
    prompt = build_system_prompt(spec)
    (example,) = find_blocks(prompt, spec.tag)
    assert "<one of: permit | deny | refer>" in example
    assert not spec.parser().parse(f"<decision>{example}</decision>").ok


@pytest.mark.parametrize(
    ("remove", "problem"),
    [
        ("refer", "decision 'refer'"),
        ("resident", "fact 'resident'"),
        ("classification", "answer key 'classification'"),
        ("facts", "facts key 'facts'"),
        ("<reasoning>", "reasoning tag <reasoning>"),
        ("<decision>", "decision tag <decision>"),
    ],
)
def test_a_prompt_missing_a_part_of_the_contract_is_caught(spec, remove, problem):
    prompt = build_system_prompt(spec).replace(remove, "XXX")
    assert any(problem in found for found in check_system_prompt(prompt, spec))


def test_a_mention_inside_a_longer_word_does_not_count():
    spec = DomainSpec(name="yn", description="Decide.", decisions=("no", "yes"), facts={})
    prompt = build_system_prompt(spec).replace('"no"', '"not"').replace("<one of: no | yes>", "<one of: not | yes>")
    assert any("decision 'no'" in found for found in check_system_prompt(prompt, spec))


@pytest.mark.parametrize(
    "example",
    [
        '<decision>{"classification": "permit", "facts": {"age": 34, "resident": true}}</decision>',
        '<decision>{"classification": "DENY"}</decision>',
    ],
)
def test_an_example_block_that_parses_as_an_answer_is_caught(spec, example):
    prompt = f"{build_system_prompt(spec)}\n\nFor example:\n{example}"
    problems = check_system_prompt(prompt, spec)
    assert len(problems) == 1 and "parses as the answer" in problems[0]
