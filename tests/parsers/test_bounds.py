import json

import pytest

from proofgym.parsers import JSONBlockParser, ParseLimits, RegexFactParser

MB = 1_000_000


def test_completion_over_the_cap_is_too_long(block):
    parser = JSONBlockParser(limits=ParseLimits(max_completion_chars=100))
    assert parser.parse(block("deny") + " " * 100).error.kind == "too_long"
    assert parser.parse([{"role": "assistant", "content": "x" * 101}]).error.kind == "too_long"


def test_prompt_does_not_count_towards_the_cap(block):
    parser = JSONBlockParser(limits=ParseLimits(max_completion_chars=100))
    prompt = "p" * 10_000
    assert parser.parse(prompt + block("deny"), prompt=prompt).claim.decision == "deny"


def test_json_over_the_cap_is_too_large():
    parser = JSONBlockParser(limits=ParseLimits(max_json_chars=50))
    body = json.dumps({"classification": "deny", "facts": {"note": "x" * 50}})
    assert parser.parse(f"<decision>{body}</decision>").error.kind == "json_too_large"


def test_nesting_over_the_cap_is_too_deep():
    parser = JSONBlockParser(limits=ParseLimits(max_json_depth=3))
    body = '{"classification": "deny", "facts": {"a": {"value": [[1]]}}}'
    assert parser.parse(f"<decision>{body}</decision>").error.kind == "json_too_deep"


def test_brackets_inside_strings_do_not_count_towards_depth():
    parser = JSONBlockParser(limits=ParseLimits(max_json_depth=2))
    note = '[[[{{{"\\ ]]'
    body = json.dumps({"classification": "deny", "facts": {"note": note}})
    assert parser.parse(f"<decision>{body}</decision>").claim.facts == {"note": note}


def test_more_facts_than_the_cap():
    parser = JSONBlockParser(limits=ParseLimits(max_facts=3))
    body = json.dumps({"classification": "deny", "facts": {f"f{i}": i for i in range(4)}})
    assert parser.parse(f"<decision>{body}</decision>").error.kind == "too_many_facts"
    lines = "\n".join(f"fact f{i}: {i}" for i in range(4))
    assert RegexFactParser(limits=ParseLimits(max_facts=3)).parse(f"{lines}\nanswer: x").error.kind == "too_many_facts"


def test_strings_over_the_cap(block):
    parser = JSONBlockParser(limits=ParseLimits(max_string_chars=10))
    assert parser.parse(block("d" * 11)).error.kind == "bad_answer"
    assert parser.parse(block("deny", {"note": "x" * 11})).error.kind == "bad_facts"
    assert parser.parse(block("deny", {"note": "x" * 10})).ok


def test_huge_integer_is_invalid_json_not_a_crash():
    body = '{"classification": "deny", "facts": {"n": ' + "9" * 5000 + "}}"
    assert JSONBlockParser().parse(f"<decision>{body}</decision>").error.kind == "invalid_json"


def test_deep_nesting_under_lifted_caps_cannot_overflow_the_stack():
    limits = ParseLimits(max_completion_chars=2 * MB, max_json_chars=2 * MB, max_json_depth=MB)
    body = "[" * 200_000 + "]" * 200_000
    assert JSONBlockParser(limits=limits).parse(f"<decision>{body}</decision>").error.kind == "invalid_json"


# One megabyte of hostile text: with the default caps it is refused up front; with lifted caps
# the scans must still be linear (these would take minutes with backtracking regexes).
ADVERSARIAL = {
    "opening tags": "<decision>" * (MB // 10),
    "opening tags then one close": "<decision>" * (MB // 10) + "</decision>",
    "closing tags": "</decision>" * (MB // 11),
    "pairs": "<decision></decision>" * (MB // 21),
    "deep json": "<decision>" + "[" * MB + "</decision>",
    "quotes": "<decision>" + '"\\' * (MB // 2) + "</decision>",
    "spaces after fact": "fact a:" + " " * MB + "x",
    "fact lines": "fact a: 1\n" * (MB // 10),
    "reasoning tags": "<reasoning>" * (MB // 11),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_megabyte_of_adversarial_text_is_refused(text):
    assert JSONBlockParser().parse(text).error.kind == "too_long"
    assert RegexFactParser().parse(text).error.kind == "too_long"


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_megabyte_of_adversarial_text_under_lifted_caps_fails_cleanly(text):
    limits = ParseLimits(max_completion_chars=2 * MB, max_json_chars=2 * MB, max_json_depth=20)
    assert not JSONBlockParser(limits=limits).parse(text).ok
    assert not RegexFactParser(limits=limits).parse(text).ok
    assert not JSONBlockParser(limits=limits).parse(text, prompt="no such prompt " * 50).ok


def test_zero_max_facts_allows_only_no_facts(block):
    parser = JSONBlockParser(limits=ParseLimits(max_facts=0))
    assert parser.parse(block("deny", {})).ok
    assert parser.parse(block("deny", {"a": 1})).error.kind == "too_many_facts"
    assert (
        RegexFactParser(limits=ParseLimits(max_facts=0)).parse("fact a: 1\nanswer: deny").error.kind == "too_many_facts"
    )
