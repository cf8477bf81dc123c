"""The prompt, with its example decision block, is never parsed as the model's answer."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.domains import DomainSpec, build_prompt_messages, build_prompt_text, build_system_prompt

SPEC = DomainSpec(
    name="permits",
    description="Decide whether the applicant described in the record gets a residence permit.",
    decisions=("permit", "deny"),
    facts={"age": "integer, the applicant's age in years", "resident": "boolean, lives in the city"},
)
RECORD = "Applicant record:\n" + json.dumps({"name": "Ada", "age": 34, "resident": True, "notes": "n" * 200})
SHORT_RECORD = "Applicant: Ada, 34, resident."
RESPONSE = (
    "<reasoning>She is 34 and a resident.</reasoning>\n"
    '<decision>{"classification": "deny", "facts": {"age": 34, "resident": true}}</decision>'
)
PARSER = SPEC.parser()
EXPECTED = PARSER.parse(RESPONSE).claim


def chatml(system: str, user: str) -> str:
    return f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def llama3(system: str, user: str, *, special_tokens: bool = True) -> str:
    text = (
        f"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>"
        f"<|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    if not special_tokens:
        for token in ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"):
            text = text.replace(token, "")
    return text


def test_the_system_prompt_has_an_example_block():
    assert "<decision>{" in build_system_prompt(SPEC)
    assert not PARSER.parse(build_prompt_text(SPEC, RECORD)).ok


@pytest.mark.parametrize("record", [RECORD, SHORT_RECORD])
def test_prompt_plus_response(record):
    prompt = build_prompt_text(SPEC, record)
    assert PARSER.parse(prompt + RESPONSE, prompt=prompt).claim == EXPECTED


@pytest.mark.parametrize("record", [RECORD, SHORT_RECORD])
@pytest.mark.parametrize(
    "template",
    [chatml, llama3, lambda s, u: llama3(s, u, special_tokens=False), lambda s, u: f"<s>[INST] {s}\n\n{u} [/INST]"],
    ids=["chatml", "llama3", "llama3-decoded", "mistral"],
)
def test_templated_prompt_plus_response(record, template):
    completion = template(build_system_prompt(SPEC), record) + RESPONSE
    for prompt in (
        build_prompt_text(SPEC, record),
        build_prompt_messages(SPEC, record),
        template(build_system_prompt(SPEC), record),
    ):
        assert PARSER.parse(completion, prompt=prompt).claim == EXPECTED


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t.replace("\n", "\r\n"),
        lambda t: " ".join(t.split()),
        lambda t: t.rstrip() + "\n\n",
        lambda t: t.replace("  ", " "),
    ],
)
def test_whitespace_differences(mangle):
    prompt = build_prompt_text(SPEC, RECORD)
    assert PARSER.parse(mangle(prompt) + RESPONSE, prompt=prompt).claim == EXPECTED


def test_chat_format_completions():
    messages = build_prompt_messages(SPEC, RECORD)
    assert PARSER.parse([{"role": "assistant", "content": RESPONSE}], prompt=messages).claim == EXPECTED
    assert PARSER.parse([*messages, {"role": "assistant", "content": RESPONSE}], prompt=messages).claim == EXPECTED
    parts = [{"role": "assistant", "content": [{"type": "text", "text": RESPONSE}]}]
    assert PARSER.parse(parts, prompt=messages).claim == EXPECTED


FEW_SHOT = (
    build_system_prompt(SPEC)
    + '\n\nSolved example:\n<decision>{"classification": "permit", "facts": {"age": 50, "resident": true}}</decision>'
)


@pytest.mark.parametrize("template", [None, chatml, llama3])
def test_a_response_without_a_block_never_borrows_the_prompts_block(template):
    # Even a few-shot prompt whose example is a valid answer: a response with no block must fail.
    prompt = f"{FEW_SHOT}\n\n{RECORD}"
    completion = (prompt if template is None else template(FEW_SHOT, RECORD)) + "<reasoning>I am unsure.</reasoning>"
    assert PARSER.parse(completion, prompt=prompt).error.kind == "no_decision_block"


def test_the_response_hedging_still_fails_after_the_prompt():
    prompt = build_prompt_text(SPEC, RECORD)
    hedge = RESPONSE + RESPONSE
    assert PARSER.parse(prompt + hedge, prompt=prompt).error.kind == "multiple_decision_blocks"


responses = st.lists(
    st.sampled_from(
        [
            "<decision>",
            "</decision>",
            '{"classification": "deny"}',
            '{"classification": "permit"}',
            "<reasoning>",
            "x",
            " ",
            "\n",
        ]
    )
    | st.text(max_size=6),
    max_size=20,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(record=st.text(max_size=300), response=responses)
def test_prompt_plus_response_parses_as_the_response_alone(record, response):
    prompt = f"{FEW_SHOT}\n\n{record}"
    assert PARSER.parse(prompt + response, prompt=prompt).claim == PARSER.parse(response).claim
