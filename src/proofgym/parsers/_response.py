"""Which text of a completion is the model's response, with the prompt never included."""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from proofgym.core import model_text
from proofgym.parsers._limits import ParseLimits
from proofgym.parsers._result import Rejection

# The prompt is located in a completion by its last this-many non-whitespace characters: long
# enough to be unique in practice, short enough to survive truncation and template edits.
_TAIL_CHARS = 200

# Special tokens that open an assistant turn, as chat templates render them.
_ASSISTANT_MARKERS = (
    "<|im_start|>assistant",  # ChatML (Qwen and others)
    "<|start_header_id|>assistant<|end_header_id|>",  # Llama 3
    "<|assistant|>",  # Phi-3, Zephyr
    "[/INST]",  # Llama 2, Mistral
    "<start_of_turn>model",  # Gemma
    "<\uff5cAssistant\uff5c>",  # DeepSeek
)
# What those markers leave behind when special tokens are decoded away (ChatML, then Llama 3).
# Plain words can occur in a response too, so they are only used when no special marker is found.
_BARE_ASSISTANT_MARKERS = ("\nassistant\n", "assistant\n\n")

# Template residue between the end of the prompt and the start of the response: whitespace,
# end-of-turn tokens, assistant markers, and a bare "assistant" line.
_LEADING_TEMPLATE = re.compile(
    "(?:"
    + "|".join(
        [r"\s"]
        + [re.escape(token) for token in ("<|im_end|>", "<|eot_id|>", "<|end|>", "</s>", "<end_of_turn>")]
        + [re.escape("<\uff5cend\u2581of\u2581sentence\uff5c>")]
        + [re.escape(marker) for marker in _ASSISTANT_MARKERS]
        + [r"assistant(?=[ \t]*\r?\n)"]
    )
    + ")+"
)
_NON_WHITESPACE = re.compile(r"\S+")
_WHITESPACE = re.compile(r"\s+")


def response_text(completion: Any, prompt: Any = None) -> str:
    """The text of ``completion`` that a parser reads: the model's response and nothing else.

    - Chat messages: the ``content`` of the *assistant* messages only, joined by newlines (a content
      may be a list of ``{"type": "text", "text": ...}`` parts; other parts are ignored). If the
      messages start with the prompt's messages, those are dropped first.
    - A string: the string, except that when ``prompt`` is given (a string, or chat messages whose
      contents are joined) the prompt is removed, since trainers such as OpenRLHF pass
      prompt + response as one string. The prompt is removed as an exact prefix; else up to the last
      occurrence of its last ~200 non-whitespace characters (whitespace-insensitive); else up to
      the last assistant-turn marker of a chat template; else up to the last occurrence of an
      earlier ~200-character stretch of it. Chat-template residue after the prompt (end-of-turn
      tokens, ``<|im_start|>assistant``, ``[/INST]``, a bare ``assistant`` line...) is removed too.
      A string that contains no part of the prompt is returned whole.

    Raises ``TypeError`` when ``completion`` or ``prompt`` has neither shape; parsers report that
    as a ``bad_completion`` format error instead.
    """
    try:
        return model_text(_extract_response(completion, prompt, max_chars=None))
    except Rejection as rejection:
        raise TypeError(rejection.error.message) from None


def read_response(completion: Any, prompt: Any, limits: ParseLimits) -> str:
    """:func:`response_text` under ``limits``; raises :class:`Rejection` for every format error."""
    text = model_text(_extract_response(completion, prompt, max_chars=limits.max_completion_chars))
    if len(text) > limits.max_completion_chars:
        raise Rejection("too_long", f"response has {len(text)} characters, limit {limits.max_completion_chars}")
    if not text.strip():
        raise Rejection("empty", "the response is empty")
    return text


def _extract_response(completion: Any, prompt: Any, *, max_chars: int | None) -> str:
    """The response text; ``max_chars`` (when set) bounds the work done before the exact length check."""
    prompt_messages: list[Mapping[str, Any]] | None = None
    if prompt is None:
        prompt_text = ""
    elif isinstance(prompt, str):
        prompt_text = prompt
    else:
        prompt_messages = _as_messages(prompt)
        if prompt_messages is None:
            raise Rejection("bad_completion", "the prompt must be a string or a list of chat messages")
        prompt_text = "\n".join(_content_text(message.get("content")) for message in prompt_messages)

    if isinstance(completion, str):
        # The prompt legitimately precedes the response; twice the cap leaves room for template
        # text the given prompt lacks (a system prompt, markers) while bounding the scan below.
        if max_chars is not None and len(completion) > 2 * max_chars + len(prompt_text):
            raise Rejection("too_long", f"completion has {len(completion)} characters")
        return _strip_prompt(completion, prompt_text) if prompt_text.strip() else completion

    messages = _as_messages(completion)
    if messages is None:
        raise Rejection(
            "bad_completion",
            f"a completion must be a string or a list of chat messages, got {type(completion).__name__}",
        )
    if prompt_messages and messages[: len(prompt_messages)] == prompt_messages:
        messages = messages[len(prompt_messages) :]
    parts: list[str] = []
    total = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        text = _content_text(message.get("content"))
        total += len(text)
        if max_chars is not None and total > max_chars:
            raise Rejection("too_long", f"assistant messages exceed {max_chars} characters")
        parts.append(text)
    return "\n".join(parts)


def _as_messages(value: Any) -> list[Mapping[str, Any]] | None:
    if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, Sequence):
        return None
    messages = list(value)
    if not all(isinstance(message, Mapping) for message in messages):
        return None
    return messages


def _content_text(content: Any) -> str:
    """A message content as text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (bytes, bytearray)) or not isinstance(content, Sequence):
        raise Rejection(
            "bad_completion", f"a message content must be a string or a list of parts, got {type(content).__name__}"
        )
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif not isinstance(part, Mapping):
            raise Rejection("bad_completion", f"a content part must be an object, got {type(part).__name__}")
        elif part.get("type") == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise Rejection("bad_completion", "a text content part must have a string 'text'")
            texts.append(text)
    return "".join(texts)


def _strip_prompt(text: str, prompt_text: str) -> str:
    if text.startswith(prompt_text):
        return _drop_leading_template(text[len(prompt_text) :])
    compact = _CompactText(text)
    prompt_compact = _compact_prompt(prompt_text)
    end = compact.end_of_last(prompt_compact[-_TAIL_CHARS:])
    if end is None:
        end = _end_of_last_assistant_marker(text)
    if end is None:
        # The prompt's end is mangled or missing; if an earlier stretch of it is present, the
        # response can only start after the latest such stretch.
        for stop in range(len(prompt_compact) - _TAIL_CHARS, _TAIL_CHARS - 1, -_TAIL_CHARS):
            end = compact.end_of_last(prompt_compact[stop - _TAIL_CHARS : stop])
            if end is not None:
                break
    if end is None:
        return text
    return _drop_leading_template(text[end:])


def _end_of_last_assistant_marker(text: str) -> int | None:
    for markers in (_ASSISTANT_MARKERS, _BARE_ASSISTANT_MARKERS):
        ends = [found + len(marker) for marker in markers if (found := text.rfind(marker)) >= 0]
        if ends:
            return max(ends)
    return None


def _drop_leading_template(text: str) -> str:
    residue = _LEADING_TEMPLATE.match(text)
    return text[residue.end() :] if residue else text


class _CompactText:
    """``text`` with its whitespace removed, for whitespace-insensitive search, mapped back to ``text``.

    The map back is built only when a search finds something (most completions echo no prompt).
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._compact = _compact(text)
        self._starts: list[int] | None = None
        self._compact_starts: list[int] = []

    def end_of_last(self, needle: str) -> int | None:
        """The index in ``text`` just past the last whitespace-insensitive occurrence of ``needle``."""
        if not needle:
            return None
        found = self._compact.rfind(needle)
        if found < 0:
            return None
        if self._starts is None:
            self._starts, position = [], 0
            for word in _NON_WHITESPACE.finditer(self._text):
                self._starts.append(word.start())
                self._compact_starts.append(position)
                position += word.end() - word.start()
        last = found + len(needle) - 1  # compact index of the occurrence's last character
        token = bisect_right(self._compact_starts, last) - 1
        return self._starts[token] + (last - self._compact_starts[token]) + 1


def _compact(text: str) -> str:
    return _WHITESPACE.sub("", text)


@functools.lru_cache(maxsize=256)
def _compact_prompt(prompt_text: str) -> str:
    # A prompt is scored with many completions (a GRPO group, a dataset's epochs): compacted once.
    return _compact(prompt_text)
