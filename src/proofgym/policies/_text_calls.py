"""Tool calls as JSON in text: how the tools are described to a model, and how its reply is read.

For servers and models without native tool calls: the tools are described in the system message,
and a reply must hold exactly one JSON object ``{"tool": name, "args": {...}}`` (prose around it is
allowed; two calls, or none, are an error the agent is told about). The environment validates the
tool's name and arguments; this module only finds the call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from proofgym.core import bounded_json

# A reply is read up to this many characters, and at most this many '{' are tried as JSON starts:
# reading stays linear-time whatever the model writes.
MAX_REPLY_CHARS = 1 << 20
MAX_OBJECT_STARTS = 10_000
_SCAN_FACTOR = 8

CALL_FORMAT = '{"tool": "<tool name>", "args": {<arguments>}}'


@dataclass(frozen=True)
class TextAction:
    """What a text reply asks for: ``action`` (a ``{"tool", "args"}`` object, or the text itself), or ``error``."""

    action: Any = None
    error: str | None = None


def tool_instructions(tools: Sequence[Mapping[str, Any]], *, accepts_text: bool = False) -> str:
    """The system-message section that describes ``tools`` (OpenAI format) and the JSON call format."""
    lines = [
        "## Tools",
        "To call a tool, reply with exactly one JSON object of this form (one call per turn; its result "
        "comes back in the next message):",
        CALL_FORMAT,
        "The tools:",
    ]
    for tool in tools:
        function = tool.get("function", tool)
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = set(parameters.get("required") or ())
        args = ", ".join(
            f"{name}: {spec.get('type', 'any')}{'' if name in required else ' (optional)'}"
            for name, spec in properties.items()
        )
        lines.append(f"- {function.get('name')}({args}): {function.get('description', '').strip()}")
        for name, spec in properties.items():
            if spec.get("description"):
                lines.append(f"    {name}: {spec['description']}")
    if accepts_text:
        lines.append("You may also reply with your answer as plain text, without a tool call: "
                     "that text is then your final answer.")
    return "\n".join(lines)


def with_tool_instructions(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], *,
                           accepts_text: bool = False) -> list[dict[str, Any]]:
    """``messages`` as plain chat text for a model without native tools.

    The tool description is appended to the system message (or becomes one); native tool-call
    turns already in the history are rewritten as text: an assistant tool call as its JSON call,
    a ``tool`` result as a user message.
    """
    out = [as_text_message(message) for message in messages]
    if not tools:
        return out
    section = tool_instructions(tools, accepts_text=accepts_text)
    if out and out[0]["role"] == "system":
        out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{section}"}
    else:
        out.insert(0, {"role": "system", "content": section})
    return out


def as_text_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One chat message with plain string content and no native tool-call fields."""
    role = str(message.get("role", "user"))
    content = message_text(message.get("content"))
    if role == "tool":
        return {"role": "user", "content": f"Tool result:\n{content}"}
    calls = message.get("tool_calls") or ()
    if role == "assistant" and calls:
        rendered = [_call_as_text(call) for call in calls if isinstance(call, Mapping)]
        content = "\n".join(part for part in (content, *rendered) if part)
    return {"role": role, "content": content}


def message_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content
                       if isinstance(part, Mapping) and part.get("type") == "text")
    return ""


def read_text_action(text: str, *, accepts_text: bool = False) -> TextAction:
    """Find the one ``{"tool": ..., "args": ...}`` object in a reply.

    No call: the text itself when the environment ``accepts_text``, else an error; several calls
    are always an error. Objects without a ``"tool"`` key (a JSON answer, an example) are not calls.
    """
    if len(text) > MAX_REPLY_CHARS:
        return TextAction(error=f"the reply has {len(text)} characters, more than the limit of {MAX_REPLY_CHARS}")
    calls, starts = [], 0
    # Characters the decoder may read in all: failed attempts re-read text, and this keeps the total linear.
    budget = _SCAN_FACTOR * len(text) + 4096
    decoder = json.JSONDecoder(strict=False)  # models often put raw newlines inside strings
    position = text.find("{")
    while position != -1:
        starts += 1
        if starts > MAX_OBJECT_STARTS or budget < 0:
            return TextAction(error="the reply has too much brace-delimited text to read as JSON")
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            budget -= exc.pos - position + 1
            position = text.find("{", position + 1)
            continue
        except (ValueError, RecursionError):  # a 5000-digit integer; nesting too deep
            budget -= len(text) - position
            position = text.find("{", position + 1)
            continue
        budget -= end - position
        if isinstance(value, dict) and "tool" in value:
            calls.append(value)
        position = text.find("{", end)
    if len(calls) == 1:
        return TextAction(action=calls[0])
    if calls:
        return TextAction(error=f"the reply holds {len(calls)} tool calls; reply with exactly one JSON object "
                                f"{CALL_FORMAT}")
    if accepts_text and text.strip():
        return TextAction(action=text)
    if not text.strip():
        return TextAction(error=f"the reply is empty; reply with exactly one JSON object {CALL_FORMAT}")
    return TextAction(error=f"no tool call found; reply with exactly one JSON object {CALL_FORMAT}")


def _call_as_text(call: Mapping[str, Any]) -> str:
    function = call.get("function")
    if not isinstance(function, Mapping):
        function = call
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's recursion limit
            pass
    call = {"tool": function.get("name"), "args": arguments if arguments is not None else {}}
    return json.dumps(bounded_json(call))  # what the model sent, under the one rule: always encodable
