"""What the serve-model tests send: a prompt and two tools; the API key and max_tokens limit of the keyed app."""

from __future__ import annotations

KEY = "model-key"
LIMIT = 48
PROMPT = [{"role": "user", "content": "Applicant: age 30, income 5"}]
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a fact up.",
                                           "parameters": {"type": "object",
                                                          "properties": {"key": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "submit", "description": "Submit the decision.",
                                           "parameters": {"type": "object",
                                                          "properties": {"decision": {"type": "string"}}}}}]
