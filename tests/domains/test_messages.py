from proofgym.domains import build_prompt_messages, build_prompt_text, build_system_prompt


def test_messages_are_system_then_user(spec):
    assert build_prompt_messages(spec, "Record: Ada, 34") == [
        {"role": "system", "content": build_system_prompt(spec)},
        {"role": "user", "content": "Record: Ada, 34"},
    ]


def test_prompt_text_is_system_prompt_then_user_text(spec):
    text = build_prompt_text(spec, "Record: Ada, 34")
    assert text == f"{build_system_prompt(spec)}\n\nRecord: Ada, 34"
