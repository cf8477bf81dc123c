"""The ``<!-- problem: ID -->`` marker a prompt carries to say which problem its answer is for (Verilog, math)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PROBLEM_MARKER = re.compile(r"<!-- problem: (\S+) -->")


def problem_marker(problem_id: str) -> str:
    """The marker line naming ``problem_id``, as a prompt writes it."""
    return f"<!-- problem: {problem_id} -->"


def problem_from_prompt(prompt: Any) -> str | None:
    """The problem id of the last marker in ``prompt`` (a string, or chat messages whose content is text or text
    parts); None when there is none or the prompt is neither."""
    if isinstance(prompt, str):
        texts = [prompt]
    elif isinstance(prompt, (list, tuple)):
        texts = [_message_text(message) for message in prompt]
    else:
        return None
    found = [match.group(1) for text in texts for match in _PROBLEM_MARKER.finditer(text)]
    return found[-1] if found else None


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(part["text"] for part in content
                         if isinstance(part, Mapping) and isinstance(part.get("text"), str))
    return ""
