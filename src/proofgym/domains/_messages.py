"""Prompts in the two shapes trainers take: chat messages and plain text."""

from __future__ import annotations

from proofgym.domains._spec import DomainSpec
from proofgym.domains._system_prompt import build_system_prompt


def build_prompt_messages(spec: DomainSpec, user_text: str) -> list[dict[str, str]]:
    """Chat-format prompt: the system prompt for ``spec``, then ``user_text`` (the record) as the user."""
    return [
        {"role": "system", "content": build_system_prompt(spec)},
        {"role": "user", "content": user_text},
    ]


def build_prompt_text(spec: DomainSpec, user_text: str) -> str:
    """Plain-text prompt: the system prompt for ``spec``, a blank line, then ``user_text``."""
    return f"{build_system_prompt(spec)}\n\n{user_text}"
