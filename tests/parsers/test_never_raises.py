"""Parsers never raise, whatever they are given, and always set exactly one of claim and error."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofgym.parsers import FORMAT_ERROR_KINDS, JSONBlockParser, ParseLimits, RegexFactParser

PARSERS = [
    JSONBlockParser(),
    JSONBlockParser(decisions=("permit", "deny"), require_facts=True),
    JSONBlockParser(limits=ParseLimits(max_completion_chars=300, max_json_chars=120, max_json_depth=2, max_facts=2)),
    RegexFactParser(),
    RegexFactParser(decisions=("permit", "deny"), limits=ParseLimits(max_facts=2, max_string_chars=8)),
]

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary()
garbage = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

# Text built from the pieces the parsers look for, so examples reach the deep code paths.
FRAGMENTS = [
    "<decision>",
    "</decision>",
    "<DECISION>",
    "<reasoning>",
    "</reasoning>",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    ":",
    '"classification"',
    '"facts"',
    '"permit"',
    '"deny"',
    '"value"',
    '"confidence"',
    "NaN",
    "Infinity",
    "1e999",
    "0.5",
    "-3",
    "true",
    "null",
    "\\ud800",
    "\ud800",
    "\n",
    " ",
    "fact ",
    "answer:",
    "age",
    "é",
    "\x00",
    "<|im_start|>assistant\n",
    "[/INST]",
    "assistant\n\n",
]
tricky_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
json_blocks = st.fixed_dictionaries(
    {}, optional={"classification": json_values | st.sampled_from(["permit", " DENY ", "x"]), "facts": json_values}
).map(lambda obj: f"<decision>{json.dumps(obj)}</decision>")
texts = tricky_text | json_blocks | st.text()
messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["assistant", "user", "system"]) | garbage,
            "content": texts
            | garbage
            | st.lists(
                st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]), "text": texts | garbage}) | garbage,
                max_size=3,
            ),
        }
    ),
    max_size=4,
)
completions = texts | messages | garbage
prompts = st.none() | texts | messages | garbage

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(completion, prompt):
    for parser in PARSERS:
        result = parser.parse(completion, prompt)
        assert (result.claim is None) != (result.error is None)
        if result.error is not None:
            assert result.error.kind in FORMAT_ERROR_KINDS
        else:
            result.claim.key()  # a parsed claim is always hashable for caching


@SETTINGS
@given(completions, prompts)
def test_any_input_gives_exactly_one_of_claim_and_error(completion, prompt):
    check(completion, prompt)


@SETTINGS
@given(texts, texts)
def test_any_prompt_and_response_text(prompt, response):
    check(prompt + response, prompt)
    check(response, None)
