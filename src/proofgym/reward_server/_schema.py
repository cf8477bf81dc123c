"""The OpenRLHF reward server's published request schema: what ``POST /get_reward`` accepts, and the key in its URL.

FastAPI cannot derive it: the route reads its body itself (so that the guard's size limit comes
first), and a label is looser than a type: the gold decision as text, an object with ``gold`` /
``source_facts`` (or their aliases ``answer`` / ``facts``), that object's JSON text, or ``null``.
Two rules are beyond JSON Schema and are stated in the descriptions: ``prompts`` and ``labels``
have one entry per ``query``, and a label's JSON text must hold a valid label object (both 422).
"""

from __future__ import annotations

import sys
from typing import Any

Schema = dict[str, Any]

# What str.strip() removes: a label is blank, or looks like JSON, after it (Python's whitespace, which
# is not ECMAScript's \s, so it is spelled out for the schema's patterns).
_SPACE = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
_GOLD: Schema = {"anyOf": [{"type": "string", "pattern": f"[^{_SPACE}]"}, {"type": "null"}],
                 "description": "the right decision (not blank), or null for none"}
_FACTS: Schema = {"anyOf": [{"type": "object"}, {"type": "null"}], "description": "fact name -> value"}
LABEL_OBJECT: Schema = {
    "type": "object", "title": "Label",
    "properties": {"gold": _GOLD, "answer": _GOLD, "source_facts": _FACTS, "facts": _FACTS},
    "description": "gold (alias answer) and source_facts (alias facts); where both spellings are set they must "
                   "agree; other keys are ignored"}
LABEL: Schema = {
    "title": "Label",
    "anyOf": [
        {"type": "null"},
        {"type": "string", "pattern": f"^[{_SPACE}]*[^{_SPACE}{{]", "description": "the gold decision"},
        {"type": "string", "pattern": f"^[{_SPACE}]*\\{{", "contentMediaType": "application/json",
         "contentSchema": LABEL_OBJECT, "description": "a label object's JSON text"},
        LABEL_OBJECT,
    ]}


def reward_request_schema(max_items: int) -> Schema:
    """The JSON Schema of a ``POST /get_reward`` body for a server taking at most ``max_items`` per request."""
    texts = {"type": "array", "items": {"type": "string"}, "maxItems": max_items}
    return {
        "type": "object", "title": "RewardRequest", "required": ["query", "prompts"],
        "properties": {
            "query": {**texts, "description": "prompt + response, one string per item"},
            "prompts": {**texts, "description": "the prompt of each item, as sent to the policy: one per query"},
            "labels": {"anyOf": [{"type": "array", "items": LABEL, "maxItems": max_items}, {"type": "null"}],
                       "description": "each item's reference, one per query; null or absent: none"}},
        "description": "OpenRLHF's remote reward request; unknown keys are ignored. prompts (and labels, when "
                       "given) have one entry per query: other lengths are a 422."}


def reward_contract(max_items: int, path: str = "/get_reward") -> Any:
    """A :func:`proofgym.http.publish` transform: ``path``'s JSON request body is the OpenRLHF request."""

    def transform(schema: Schema) -> None:
        schema.setdefault("components", {}).setdefault("schemas", {})["RewardRequest"] = \
            reward_request_schema(max_items)
        body = {"$ref": "#/components/schemas/RewardRequest"}
        schema["paths"][path]["post"]["requestBody"] = {"required": True,
                                                        "content": {"application/json": {"schema": body}}}

    return transform


#: The key in the URL (``?key=<key>``): how OpenRLHF, whose reward client sends no headers, authenticates.
QUERY_KEY_SCHEME: Schema = {"ApiKeyQuery": {
    "type": "apiKey", "in": "query", "name": "key",
    "description": "the server's API key in the URL, the OpenRLHF way: --reward.remote_url "
                   "http://host:port/get_reward?key=<key> (removed from the request before it is logged)"}}


def query_key() -> Any:
    """A :func:`proofgym.http.publish` transform, after ``require_key``: every operation that needs the
    key may also send it as the ``key`` URL parameter."""

    def transform(schema: Schema) -> None:
        schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(
            {name: dict(scheme) for name, scheme in QUERY_KEY_SCHEME.items()})
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                if "security" in operation:
                    operation["security"] = [*operation["security"], *({name: []} for name in QUERY_KEY_SCHEME)]

    return transform
