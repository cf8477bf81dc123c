"""Tools, tool calls, and turning whatever an agent sent into a validated tool call.

Argument schemas use a small subset of JSON Schema -- an object with ``properties`` of type
``string`` (optionally ``maxLength``), ``integer`` or ``boolean``, ``required`` and
``additionalProperties: false`` -- checked here by a validator that supports exactly that subset.
A schema using anything else is refused when the tool is defined, so no keyword is silently ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

# An action arrives as text at most this long (a 64 KiB file escapes to a few times that in JSON).
MAX_ACTION_CHARS = 1 << 20

_TOP_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})
_PROPERTY_KEYWORDS = {
    "string": frozenset({"type", "description", "maxLength"}),
    "integer": frozenset({"type", "description"}),
    "boolean": frozenset({"type", "description"}),
}
# The envelopes an action may come in, by the key that identifies each: the keys each may carry.
_TOOL_FORM = frozenset({"tool", "args"})
_NAME_FORM = frozenset({"name", "arguments", "id", "type"})
_FUNCTION_FORM = frozenset({"function", "id", "type"})
# The keys that make a JSON object a tool call in one of the forms above (the key parse_action dispatches on).
CALL_KEYS = frozenset({"tool", "name", "function"})
_FUNCTION_BODY = frozenset({"name", "arguments"})


class ActionError(ValueError):
    """An action that is not a valid call of one of the environment's tools; the message is for the agent."""


@dataclass(frozen=True)
class Tool:
    """A tool an agent may call: its name, what it does, and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "additionalProperties": False}
    )

    def __post_init__(self) -> None:
        _check_schema(self.name, self.parameters)

    def to_openai(self) -> dict[str, Any]:
        """The tool in the OpenAI tool format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": _deep_copy(self.parameters)},
        }


@dataclass(frozen=True)
class ToolCall:
    """A validated call: a tool's name and arguments that satisfy its schema."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


def parse_action(action: Any, tools: Mapping[str, Tool]) -> ToolCall:
    """Read ``action`` as a call of one of ``tools`` and validate its arguments, or raise :class:`ActionError`.

    Accepted forms, as a mapping or as a JSON string of one: ``{"tool": name, "args": {...}}``;
    the OpenAI forms ``{"name": name, "arguments": {...} | "<json>"}`` and
    ``{"type": "function", "id": ..., "function": {"name": name, "arguments": ...}}``.
    """
    if isinstance(action, ToolCall):
        return _validated(action.name, action.args, tools)
    if isinstance(action, (bytes, bytearray)):
        try:
            action = bytes(action).decode("utf-8")
        except UnicodeDecodeError:
            raise ActionError("the action is not valid UTF-8") from None
    if isinstance(action, str):
        action = _decode_json(action, "the action")
    if not isinstance(action, Mapping):
        raise ActionError(f"an action must be a JSON object naming a tool, got {_kind(action)}")
    keys = set(action)
    if "function" in keys:
        _check_keys(keys, _FUNCTION_FORM, "the action")
        body = action["function"]
        if not isinstance(body, Mapping):
            raise ActionError(f"'function' must be an object with 'name' and 'arguments', got {_kind(body)}")
        _check_keys(set(body), _FUNCTION_BODY, "'function'")
        name, args = body.get("name"), body.get("arguments")
    elif "tool" in keys:
        _check_keys(keys, _TOOL_FORM, "the action")
        name, args = action["tool"], action.get("args")
    elif "name" in keys:
        _check_keys(keys, _NAME_FORM, "the action")
        name, args = action["name"], action.get("arguments")
    else:
        raise ActionError('an action must name a tool: {"tool": name, "args": {...}}')
    if isinstance(args, str):
        # OpenAI sends arguments as a JSON string; an empty one means "no arguments".
        args = _decode_json(args, "the arguments") if args.strip() else None
    return _validated(name, {} if args is None else args, tools)


def _validated(name: Any, args: Any, tools: Mapping[str, Tool]) -> ToolCall:
    if not isinstance(name, str) or name not in tools:
        raise ActionError(f"unknown tool {_preview(name)}; the tools are {sorted(tools)}")
    if not isinstance(args, Mapping):
        raise ActionError(f"{name}: the arguments must be an object, got {_kind(args)}")
    errors = _schema_errors(args, tools[name].parameters)
    if errors:
        raise ActionError(f"{name}: " + "; ".join(errors))
    return ToolCall(name, dict(args))


def _schema_errors(args: Mapping[Any, Any], schema: Mapping[str, Any]) -> list[str]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    errors = [f"missing required argument {key!r}" for key in schema.get("required", ()) if key not in args]
    for key, value in args.items():
        if key not in properties:
            if schema.get("additionalProperties", True) is False:
                errors.append(f"unexpected argument {_preview(key)}; the arguments are {sorted(properties)}")
            continue
        prop = properties[key]
        expected = prop["type"]
        if not _has_type(value, expected):
            errors.append(f"argument {key!r} must be {_ARTICLE[expected]}, got {_kind(value)}")
        elif expected == "string" and "maxLength" in prop and len(value) > prop["maxLength"]:
            errors.append(f"argument {key!r} has {len(value)} characters, more than the limit of {prop['maxLength']}")
    return errors


_ARTICLE = {"string": "a string", "integer": "an integer", "boolean": "a boolean"}


def _has_type(value: Any, expected: str) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is not an integer


def _check_schema(tool: str, schema: Mapping[str, Any]) -> None:
    """Refuse a schema outside the supported subset, naming the tool and the offending part."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError(f"tool {tool!r}: parameters must be a JSON Schema with type 'object'")
    unsupported = set(schema) - _TOP_KEYWORDS
    if unsupported:
        raise ValueError(f"tool {tool!r}: unsupported schema keywords {sorted(unsupported)}")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise ValueError(f"tool {tool!r}: 'properties' must be an object")
    for key, prop in properties.items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if kind not in _PROPERTY_KEYWORDS:
            raise ValueError(f"tool {tool!r}: property {key!r} must have type string, integer or boolean")
        unsupported = set(prop) - _PROPERTY_KEYWORDS[kind]
        if unsupported:
            raise ValueError(f"tool {tool!r}: property {key!r} uses unsupported keywords {sorted(unsupported)}")
        limit = prop.get("maxLength")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"tool {tool!r}: property {key!r} has a maxLength that is not a non-negative integer")
    required = schema.get("required", [])
    if not isinstance(required, (list, tuple)) or any(key not in properties for key in required):
        raise ValueError(f"tool {tool!r}: 'required' must list declared properties")
    if schema.get("additionalProperties", False) not in (True, False):
        raise ValueError(f"tool {tool!r}: 'additionalProperties' must be true or false")


def _decode_json(text: str, what: str) -> Any:
    if len(text) > MAX_ACTION_CHARS:
        raise ActionError(f"{what} has {len(text)} characters, more than the limit of {MAX_ACTION_CHARS}")
    try:
        return json.loads(text, object_pairs_hook=_without_duplicates)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is a 5000-digit integer
        raise ActionError(f"{what} is not valid JSON: {str(exc)[:200]}") from None


def _without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # {"tool": "compile", "tool": "submit"} is ambiguous: which call was meant depends on the decoder.
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("an object has a duplicate key")
    return result


def _check_keys(keys: set[Any], allowed: frozenset[str], where: str) -> None:
    unexpected = keys - allowed
    if unexpected:
        names = sorted(_preview(key) for key in unexpected)
        raise ActionError(f"{where} has unexpected keys {', '.join(names)}; allowed: {sorted(allowed)}")


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for error messages (never the value itself, which may be huge)."""
    for kind, types in (("null", type(None)), ("a boolean", bool), ("an integer", int), ("a number", float),
                        ("a string", str), ("an array", (list, tuple)), ("an object", Mapping)):
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _preview(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else _kind(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _deep_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _deep_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_deep_copy(item) for item in value]
    return value


def tool_table(tools: Sequence[Tool]) -> dict[str, Tool]:
    """Tools by name; refuses duplicate names."""
    table: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in table:
            raise ValueError(f"two tools are named {tool.name!r}")
        table[tool.name] = tool
    return table
