import pytest

from proofgym.parsers import response_text

PROMPT = "You are a classifier. Answer with a decision block.\n\nRecord: " + "x" * 300 + " end of record."


def test_plain_string_without_prompt_is_returned_whole():
    assert response_text("  <|im_start|>assistant\nhello") == "  <|im_start|>assistant\nhello"


def test_chat_completion_keeps_only_assistant_contents():
    completion = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": "first"},
        {"role": "tool", "content": "tool output"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "sec"}, {"type": "image_url"}, {"type": "text", "text": "ond"}],
        },
    ]
    assert response_text(completion) == "first\n\nsecond"


def test_chat_completion_drops_a_leading_copy_of_the_prompt_messages():
    prompt = [
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": "few-shot answer"},
        {"role": "user", "content": "q"},
    ]
    completion = [*prompt, {"role": "assistant", "content": "real answer"}]
    assert response_text(completion, prompt) == "real answer"


def test_exact_prompt_prefix_is_removed():
    assert response_text(PROMPT + "the response", PROMPT) == "the response"


@pytest.mark.parametrize(
    "between",
    [
        "<|im_end|>\n<|im_start|>assistant\n",
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "assistant\n\n",
        "\nassistant\n",
        " [/INST] ",
        "<|end|>\n<|assistant|>\n",
        "<end_of_turn>\n<start_of_turn>model\n",
    ],
)
def test_chat_template_markers_after_the_prompt_are_removed(between):
    templated = "<|im_start|>system\n" + PROMPT.replace("\n\nRecord", "<|im_end|>\n<|im_start|>user\nRecord")
    assert response_text(templated + between + "the response", PROMPT) == "the response"


def test_whitespace_differences_do_not_hide_the_prompt():
    mangled = " ".join(PROMPT.split()) + "\n"
    assert response_text(mangled + "the response", PROMPT) == "the response"
    assert response_text(PROMPT.replace(" ", "\n ") + "\r\n the response", PROMPT) == "the response"


def test_prompt_found_by_its_end_when_its_start_was_changed():
    assert response_text("<s>[INST] " + PROMPT[5:] + " [/INST] the response", PROMPT) == "the response"


def test_unlocatable_prompt_falls_back_to_the_last_assistant_marker():
    completion = "<|im_start|>user\ncompletely different<|im_end|>\n<|im_start|>assistant\nthe response"
    assert response_text(completion, PROMPT) == "the response"


def test_prompt_with_a_mangled_end_is_cut_after_its_last_recognisable_part():
    prompt = "Example: <decision>{}</decision>\n" + " ".join(f"field{i}={i}" for i in range(200))
    completion = prompt[:-300] + "[truncated]\nthe response"
    text = response_text(completion, prompt)
    assert text.endswith("the response")
    assert "Example" not in text and "field0=" not in text


def test_completion_without_the_prompt_is_returned_whole():
    assert response_text("just the response", PROMPT) == "just the response"


def test_chat_prompt_with_string_completion():
    prompt = [{"role": "system", "content": "sys " * 30}, {"role": "user", "content": "Record: " + "y" * 250}]
    assert response_text("sys " * 30 + "\nRecord: " + "y" * 250 + "the response", prompt) == "the response"


@pytest.mark.parametrize(
    ("completion", "prompt"),
    [
        (None, None),
        (3, None),
        (b"bytes", None),
        ({"role": "assistant", "content": "x"}, None),
        ([{"role": "assistant", "content": 3}], None),
        ([{"role": "assistant", "content": [3]}], None),
        (["not a message"], None),
        ("text", 3),
        ("text", [1, 2]),
    ],
)
def test_wrong_shapes_raise_type_error(completion, prompt):
    with pytest.raises(TypeError):
        response_text(completion, prompt)
