"""OpenAI chat completions <-> inspect_ai's model types: messages, tools and a completion, both ways.

One copy of the conversion, used by the model API (inspect's messages out to an OpenAI-compatible server, its answer
back) and by the episode policy (proofgym's OpenAI-shaped history into inspect's model, its output back).

Round trips are exact where a server could tell the difference: a tool keeps its OpenAI schema in
``ToolInfo.options`` (inspect's schema model reorders keys and adds ``required: []``), and an assistant message made
from an OpenAI one keeps it in ``metadata`` (its ``content`` may be ``null`` and its tool-call arguments are the
server's own JSON text), so a conversation sent through inspect reaches the server as ``proofgym eval`` sends it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

#: Where a converted tool keeps its OpenAI form (``ToolInfo.options``) and a converted assistant message its OpenAI
#: message (``metadata``).
OPENAI_KEY = "proofgym_openai"

_STOP_REASONS: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens", "tool_calls": "tool_calls",
                                        "function_call": "tool_calls", "content_filter": "content_filter"}
_FINISH_REASONS: dict[str, str] = {"stop": "stop", "max_tokens": "length", "model_length": "length",
                                   "tool_calls": "tool_calls", "content_filter": "content_filter"}


def _text(content: Any) -> str:
    """An OpenAI message's content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content
                       if isinstance(part, Mapping) and part.get("type") == "text")
    return str(content)


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as an object, and why they are not one (the text kept under ``"raw"``)."""
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or raw == "":
        return {}, None
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return {"raw": raw}, f"the arguments are not JSON: {exc}"
    if not isinstance(value, dict):
        return {"raw": raw}, "the arguments are not a JSON object"
    return value, None


def inspect_message(message: Mapping[str, Any]) -> ChatMessage:
    """One OpenAI chat message as inspect's (system, user, assistant with its tool calls, tool)."""
    role = message.get("role")
    if role == "system":
        return ChatMessageSystem(content=_text(message.get("content")))
    if role == "tool":
        return ChatMessageTool(content=_text(message.get("content")),
                               tool_call_id=str(message.get("tool_call_id") or "") or None)
    if role == "assistant":
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                continue
            arguments, problem = _arguments(function.get("arguments"))
            calls.append(ToolCall(id=str(call.get("id") or ""), function=str(function.get("name") or ""),
                                  arguments=arguments, parse_error=problem))
        return ChatMessageAssistant(content=_text(message.get("content")), tool_calls=calls or None,
                                    metadata={OPENAI_KEY: dict(message)})
    content = message.get("content")
    if isinstance(content, list):
        parts: list[ContentText | ContentImage] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "image_url":
                url = part.get("image_url")
                parts.append(ContentImage(image=str(url.get("url") if isinstance(url, Mapping) else url)))
            elif isinstance(part, Mapping):
                parts.append(ContentText(text=str(part.get("text", ""))))
        return ChatMessageUser(content=list(parts))
    return ChatMessageUser(content=_text(content))


def inspect_messages(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    return [inspect_message(message) for message in messages]


def _openai_content(message: ChatMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ContentText):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ContentImage):
            parts.append({"type": "image_url", "image_url": {"url": part.image}})
    if all(part["type"] == "text" for part in parts):
        return "".join(part["text"] for part in parts)
    return parts


def openai_message(message: ChatMessage) -> dict[str, Any]:
    """One inspect message as an OpenAI chat message (an assistant message made from one: that one, unchanged)."""
    if isinstance(message, ChatMessageAssistant):
        kept = (message.metadata or {}).get(OPENAI_KEY)
        if isinstance(kept, Mapping):
            return dict(kept)
        content = _openai_content(message)
        out: dict[str, Any] = {"role": "assistant", "content": content}
        if message.tool_calls:
            out["content"] = content or None
            out["tool_calls"] = [{"id": call.id, "type": "function",
                                  "function": {"name": call.function,
                                               "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
                                 for call in message.tool_calls]
        return out
    if isinstance(message, ChatMessageTool):
        text = message.text if message.error is None else f"Error: {message.error.message}"
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": text}
    return {"role": message.role, "content": _openai_content(message)}


def openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    return [openai_message(message) for message in messages]


def inspect_tool(tool: Mapping[str, Any]) -> ToolInfo:
    """An OpenAI function tool as inspect's ``ToolInfo``, its OpenAI form kept in ``options``."""
    function = tool.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise ValueError(f"expected an OpenAI function tool ({{'type': 'function', 'function': {{'name': ...}}}}), "
                         f"got {json.dumps(tool, default=str)[:200]}")
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return ToolInfo(name=function["name"], description=str(function.get("description") or ""),
                    parameters=ToolParams.model_validate(parameters), options={OPENAI_KEY: dict(tool)})


def openai_tool(tool: ToolInfo) -> dict[str, Any]:
    """An inspect tool as an OpenAI function tool (one made from an OpenAI tool: that one, unchanged)."""
    kept = (tool.options or {}).get(OPENAI_KEY)
    if isinstance(kept, Mapping):
        return dict(kept)
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": tool.parameters.model_dump(exclude_none=True)}}


def model_output(payload: Mapping[str, Any], model: str) -> ModelOutput:
    """An OpenAI chat completion as inspect's ``ModelOutput``, with its usage (zero counts when the server sends
    none, so that inspect never counts tokens itself: that would download a tokenizer)."""
    choices = []
    for choice in payload.get("choices") or []:
        if not isinstance(choice, Mapping) or not isinstance(choice.get("message"), Mapping):
            continue
        message = inspect_message({**choice["message"], "role": "assistant"})
        assert isinstance(message, ChatMessageAssistant)
        message.model = model
        message.source = "generate"
        reason = _STOP_REASONS.get(str(choice.get("finish_reason")), "unknown")
        choices.append(ChatCompletionChoice(message=message, stop_reason=reason))
    if not choices:
        raise ValueError("the server's response has no choices[0].message")
    found = payload.get("usage")
    usage: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return ModelOutput(model=str(payload.get("model") or model), choices=choices,
                       usage=ModelUsage(input_tokens=prompt, output_tokens=completion,
                                        total_tokens=int(usage.get("total_tokens") or prompt + completion)))


def chat_completion(output: ModelOutput) -> dict[str, Any]:
    """inspect's ``ModelOutput`` as an OpenAI chat completion (what proofgym's policies read)."""
    choices = [{"index": index, "message": openai_message(choice.message),
                "finish_reason": _FINISH_REASONS.get(choice.stop_reason, choice.stop_reason)}
               for index, choice in enumerate(output.choices)]
    payload: dict[str, Any] = {"object": "chat.completion", "model": output.model, "choices": choices}
    if output.usage is not None:
        payload["usage"] = {"prompt_tokens": output.usage.input_tokens,
                            "completion_tokens": output.usage.output_tokens,
                            "total_tokens": output.usage.total_tokens}
    return payload
