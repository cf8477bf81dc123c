"""Flat dataset rows from sessions, for SFT and filtering (``TraceStore.to_dataset``).

The text columns come from the session's last LM call that has a response: ``messages`` is its request's chat
messages plus the assistant's reply, ``prompt`` its request text (a ``prompt`` string, or the last non-assistant
message), ``completion`` the reply text. OpenAI-style requests (``{"messages": [...]}`` or ``{"prompt": ...}``) and
responses (``choices[0].message.content`` / ``choices[0].text``), bare strings and bare message lists are read;
anything else leaves those columns empty rather than guessing.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from proofgym.traces._records import LMCallEvent, SessionTrace

COLUMNS = ("session_id", "run_id", "env_name", "seed", "policy_id", "correlation_id", "status", "reward",
           "outcome_score", "n_steps", "n_lm_calls", "prompt_tokens", "completion_tokens", "prompt", "completion",
           "messages", "session_json")


def dataset_features() -> Any:
    """The ``datasets.Features`` of ``session_row`` rows (fixed, so empty and mixed exports agree)."""
    from datasets import Features, List, Value

    string, integer, real = Value("string"), Value("int64"), Value("float64")
    return Features({
        "session_id": string, "run_id": string, "env_name": string, "seed": integer, "policy_id": string,
        "correlation_id": string, "status": string, "reward": real, "outcome_score": real, "n_steps": integer,
        "n_lm_calls": integer, "prompt_tokens": integer, "completion_tokens": integer, "prompt": string,
        "completion": string, "messages": List({"role": string, "content": string}), "session_json": string,
    })


def to_dataset(sessions: Iterable[SessionTrace]) -> Any:
    """A ``datasets.Dataset`` with one ``session_row`` per session."""
    from datasets import Dataset

    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for session in sessions:
        for name, value in session_row(session).items():
            columns[name].append(value)
    return Dataset.from_dict(columns, features=dataset_features())


def session_row(session: SessionTrace) -> dict[str, Any]:
    """One flat row: the session's ids and rewards, its prompt / messages / completion, and the session as JSON."""
    calls = [call for step in session.steps for call in step.lm_calls]
    last = next((call for call in reversed(calls) if response_text(call.response) is not None), None)
    messages, prompt, completion = [], None, None
    if last is not None:
        completion = response_text(last.response)
        messages = request_messages(last.request)
        prompt = request_prompt(last.request, messages)
        messages = [*messages, {"role": "assistant", "content": completion or ""}] if messages else []
    outcome = session.outcome_reward
    return {
        "session_id": session.session_id, "run_id": session.run_id, "env_name": session.env_name,
        "seed": session.seed, "policy_id": session.policy_id, "correlation_id": session.correlation_id,
        "status": session.status, "reward": float(session.total_reward),
        "outcome_score": None if outcome is None or outcome.score is None else float(outcome.score),
        "n_steps": len(session.steps), "n_lm_calls": len(calls),
        "prompt_tokens": _token_sum(calls, "prompt_tokens"),
        "completion_tokens": _token_sum(calls, "completion_tokens"),
        "prompt": prompt, "completion": completion, "messages": messages,
        "session_json": json.dumps(session.to_dict()),
    }


def _token_sum(calls: list[LMCallEvent], name: str) -> int | None:
    counts = [getattr(call, name) for call in calls if getattr(call, name) is not None]
    return sum(counts) if counts else None


def content_text(content: Any) -> str | None:
    """A message's text: a string, or the ``text`` parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict)]
        texts = [part for part in parts if isinstance(part, str)]
        return "".join(texts) if texts else None
    return None


def response_text(response: Any) -> str | None:
    """The completion text of an LM response, or None when it has none."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return None
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        first = choices[0]
        if isinstance(first.get("message"), dict):
            return content_text(first["message"].get("content"))
        return first.get("text") if isinstance(first.get("text"), str) else None
    if isinstance(response.get("message"), dict):
        return content_text(response["message"].get("content"))
    for key in ("content", "text", "completion"):
        text = content_text(response.get(key))
        if text is not None:
            return text
    return None


def request_messages(request: Any) -> list[dict[str, str]]:
    """The chat messages of an LM request as ``{role, content}`` strings ([] when it has none)."""
    raw = request.get("messages") if isinstance(request, dict) else request
    if not isinstance(raw, list):
        return []
    messages = []
    for message in raw:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return []
        text = content_text(message.get("content"))
        messages.append({"role": message["role"], "content": "" if text is None else text})
    return messages


def request_prompt(request: Any, messages: list[dict[str, str]]) -> str | None:
    """The prompt text: a request's ``prompt`` string (or the request itself), else its last non-assistant message."""
    if isinstance(request, str):
        return request
    if isinstance(request, dict) and isinstance(request.get("prompt"), str):
        prompt: str = request["prompt"]
        return prompt
    for message in reversed(messages):
        if message["role"] != "assistant":
            return message["content"]
    return None
