"""A ``SessionTrace`` to table rows and back; encoding validates every field on the way in.

Encoding is where a session is checked (types, statuses, finite numbers, JSON-serializable payloads) and where each
payload is serialized, once, to strict JSON (``RawJSON``); the store's JSON serializer passes that text through, so
the database never sees NaN, infinity or an object it cannot read back. The rows are a snapshot: mutating the
session after encoding changes nothing that gets written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from proofgym.core import bounded_json, model_text, redact_secrets
from proofgym.traces._errors import TraceValidationError
from proofgym.traces._records import (
    EVENT_REWARD_KINDS,
    SESSION_STATUSES,
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    VerificationEvent,
)

_INT64 = 2**63
_strict_dumps = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode
# What the escape of a lone surrogate looks like (a high one not followed by a low one, or a low one alone): a
# cheap first test; the text of a literal backslash can look the same, so a match is confirmed on the value.
_LONE_SURROGATE_ESCAPE = re.compile(r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|"
                                    r"(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}")


class RawJSON(str):
    """JSON text the codec already serialized and checked; the store writes it as is."""

    __slots__ = ()


def dumps_json(value: Any) -> str:
    """Strict JSON text for a payload (no NaN / infinity); ``RawJSON`` is passed through."""
    if type(value) is RawJSON:
        return str(value)
    if type(value) is not dict and isinstance(value, Mapping):
        value = dict(value)
    return _strict_dumps(value)


@dataclass
class EncodedSession:
    """One session as the rows of each table, ready to insert in one transaction."""

    session_id: str
    run_id: str
    session: dict[str, Any]
    steps: list[dict[str, Any]]
    lm_calls: list[dict[str, Any]]
    env_events: list[dict[str, Any]]
    verifications: list[dict[str, Any]]
    event_rewards: list[dict[str, Any]]
    outcome_rewards: list[dict[str, Any]]


class Fields:
    """Checks the fields of one record; every error names the record (``owner``) and the field."""

    def __init__(self, owner: str = "") -> None:
        self.prefix = f"{owner}: " if owner else ""

    def fail(self, field: str, expected: str, value: Any) -> TraceValidationError:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return TraceValidationError(f"{self.prefix}{field} must be {expected}, got {shown}")

    @overload
    def text(self, field: str, value: Any, *, optional: Literal[False] = False, nonempty: bool = False) -> str: ...

    @overload
    def text(self, field: str, value: Any, *, optional: bool, nonempty: bool = False) -> str | None: ...

    def text(self, field: str, value: Any, *, optional: bool = False, nonempty: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(field, "a string" + (" or None" if optional else ""), value)
        if nonempty and not value:
            raise self.fail(field, "a non-empty string", value)
        if "\x00" in value:
            raise self.fail(field, "a string without NUL characters", value)
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise self.fail(field, "valid Unicode text (it has an unpaired surrogate)", value) from None
        return value

    @overload
    def number(self, field: str, value: Any, *, optional: Literal[False] = False,
               nonnegative: bool = False) -> float: ...

    @overload
    def number(self, field: str, value: Any, *, optional: bool, nonnegative: bool = False) -> float | None: ...

    def number(self, field: str, value: Any, *, optional: bool = False, nonnegative: bool = False) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(field, "a number" + (" or None" if optional else ""), value)
        try:
            number = float(value)
        except OverflowError:
            raise self.fail(field, "a finite number", value) from None
        if not math.isfinite(number):
            raise self.fail(field, "a finite number (NaN and infinity are rejected)", value)
        if nonnegative and number < 0:
            raise self.fail(field, "a non-negative number", value)
        return number

    @overload
    def integer(self, field: str, value: Any, *, optional: Literal[False] = False,
                nonnegative: bool = False) -> int: ...

    @overload
    def integer(self, field: str, value: Any, *, optional: bool, nonnegative: bool = False) -> int | None: ...

    def integer(self, field: str, value: Any, *, optional: bool = False, nonnegative: bool = False) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, "an integer" + (" or None" if optional else ""), value)
        if not -_INT64 <= value < _INT64:
            raise self.fail(field, "a 64-bit integer", value)
        if nonnegative and value < 0:
            raise self.fail(field, "a non-negative integer", value)
        return int(value)

    def flag(self, field: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, "True or False", value)
        return value

    def payload(self, field: str, value: Any, *, mapping: bool = False) -> RawJSON:
        if mapping and type(value) is not dict and not isinstance(value, Mapping):
            raise self.fail(field, "a mapping (JSON object)", value)
        try:
            text = _strict_dumps(value) if type(value) is dict else dumps_json(value)
        except (ValueError, TypeError, RecursionError) as exc:
            raise TraceValidationError(f"{self.prefix}{field} must be JSON-serializable, "
                                       f"without NaN or infinity ({str(exc)[:200]})") from None
        # ASCII-escaped, so the bytes always encode; but Postgres refuses a lone surrogate's or NUL's escape,
        # and a reader would get back text that no encoder accepts. Such text is model output (a completion
        # with a NUL): it is stored under the one rule for untrusted text (proofgym.core.bounded_json, U+FFFD in
        # place), as the rollout loop records it, so that no trace writer (a trainer's, the demo's) fails on it.
        suspect = "\\u" in text and ("\\u0000" in text or ("\\ud" in text and _LONE_SURROGATE_ESCAPE.search(text)))
        if suspect and _holds_unclean_text(value):
            text = dumps_json(bounded_json(value))
        return RawJSON(text)

    def items(self, field: str, value: Any, kind: type) -> Sequence[Any]:
        if not isinstance(value, (list, tuple)):
            raise self.fail(field, f"a list of {kind.__name__}", value)
        for position, item in enumerate(value):
            if not isinstance(item, kind):
                raise self.fail(f"{field}[{position}]", f"a {kind.__name__}", item)
        return value


def _free_text(f: Fields, field: str, value: Any) -> str | None:
    """An error message (it may quote what a model wrote): stored under the one rule for untrusted text."""
    return f.text(field, model_text(value) if isinstance(value, str) else value, optional=True)


def _holds_unclean_text(value: Any) -> bool:
    """Whether a string (or key) anywhere in ``value`` holds a lone surrogate or NUL (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if model_text(item) is not item:
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def encode_session(session: SessionTrace) -> EncodedSession:
    """Validate ``session`` and return its rows; raises ``TraceValidationError`` naming the session and field.
    Its metadata and each model call's request are stored with no credential in them
    (:func:`~proofgym.core.redact_secrets`: whoever wrote the session, none reaches the store)."""
    if not isinstance(session, SessionTrace):
        raise TraceValidationError(f"expected a SessionTrace, got {type(session).__name__}")
    sid = session.session_id
    if not isinstance(sid, str) or not sid:
        raise TraceValidationError(f"session_id must be a non-empty string, got {sid!r}")
    f = Fields(f"session {sid!r}")
    f.text("session_id", sid)
    run_id = f.text("run_id", session.run_id, nonempty=True)
    if session.status not in SESSION_STATUSES:
        raise f.fail("status", f"one of {', '.join(SESSION_STATUSES)}", session.status)
    steps = f.items("steps", session.steps, StepTrace)
    outcome = session.outcome_reward
    if outcome is not None and not isinstance(outcome, OutcomeReward):
        raise f.fail("outcome_reward", "an OutcomeReward or None", outcome)

    step_rows, lm_rows, env_rows, verification_rows, reward_rows = [], [], [], [], []
    previous = -1
    step_total = 0.0
    for position, step in enumerate(steps):
        at = f"steps[{position}]"
        index = f.integer(f"{at}.index", step.index, nonnegative=True)
        if index <= previous:
            raise f.fail(f"{at}.index", f"greater than the previous step's index {previous}", index)
        previous = index
        reward = f.number(f"{at}.reward", step.reward)
        step_total += reward
        step_rows.append({
            "session_id": sid, "step_index": index,
            "observation": f.payload(f"{at}.observation", step.observation),
            "action": f.payload(f"{at}.action", step.action),
            "reward": reward, "done": f.flag(f"{at}.done", step.done),
            "truncated": f.flag(f"{at}.truncated", step.truncated),
            "info": f.payload(f"{at}.info", step.info, mapping=True),
        })
        for n, call in enumerate(f.items(f"{at}.lm_calls", step.lm_calls, LMCallEvent)):
            lm_rows.append(_lm_call_row(f, f"{at}.lm_calls[{n}]", sid, index, n, call))
        if step.env_event is not None:
            env_rows.append(_env_event_row(f, f"{at}.env_event", sid, index, step.env_event))
        if step.verification is not None:
            verification_rows.append(_verification_row(f, f"{at}.verification", sid, index, step.verification))
        for n, reward_event in enumerate(f.items(f"{at}.event_rewards", step.event_rewards, EventReward)):
            reward_rows.append(_event_reward_row(f, f"{at}.event_rewards[{n}]", sid, index, n, reward_event))

    outcome_rows = [] if outcome is None else [_outcome_row(f, sid, outcome)]
    total = outcome_rows[0]["total"] if outcome_rows else step_total
    if not math.isfinite(total):
        raise f.fail("steps[*].reward", "rewards whose sum is finite", total)
    row = {
        "session_id": sid, "run_id": run_id,
        "env_name": f.text("env_name", session.env_name, nonempty=True),
        "seed": f.integer("seed", session.seed, optional=True),
        "policy_id": f.text("policy_id", session.policy_id, optional=True),
        "correlation_id": f.text("correlation_id", session.correlation_id, optional=True),
        "status": session.status, "error": _free_text(f, "error", session.error),
        "started_at": f.number("started_at", session.started_at),
        "ended_at": f.number("ended_at", session.ended_at, optional=True),
        "n_steps": len(step_rows), "total_reward": total,
        "outcome_score": outcome_rows[0]["score"] if outcome_rows else None,
        "metadata": f.payload("metadata", redact_secrets(session.metadata), mapping=True),
    }
    last = steps[-1] if steps else None
    row["outcome"], row["task_id"] = index_keys(
        session.metadata, steps[0].observation if steps else None, last.info if last else None,
        last.verification.outcome if last is not None and last.verification is not None else None)
    return EncodedSession(sid, run_id, row, step_rows, lm_rows, env_rows, verification_rows, reward_rows,
                          outcome_rows)


_TASK_KEYS = ("task_id", "record_id", "problem_id")
_KEY_CHARS = 200  # longer values are not indexed (a listing filter on them would not be useful)


def index_keys(metadata: Any, first_observation: Any, last_info: Any,
               last_outcome: Any) -> tuple[str | None, str | None]:
    """``(outcome, task_id)`` as the sessions table indexes them: the last step's verification outcome (else its
    ``info["outcome"]``), and ``metadata["task_id"]`` (else the first observation's ``data`` record or problem id,
    else ``metadata["row_id"]``). Anything that is not a short string is None."""
    def short(value: Any) -> str | None:
        return value if isinstance(value, str) and 0 < len(value) <= _KEY_CHARS else None

    outcome = short(last_outcome) or (short(last_info.get("outcome")) if isinstance(last_info, Mapping) else None)
    meta = metadata if isinstance(metadata, Mapping) else {}
    data = first_observation.get("data") if isinstance(first_observation, Mapping) else None
    data = data if isinstance(data, Mapping) else {}
    task = short(meta.get("task_id")) or next((short(data.get(k)) for k in _TASK_KEYS if short(data.get(k))), None)
    return outcome, task or short(meta.get("row_id"))


def _lm_call_row(f: Fields, at: str, sid: str, index: int, position: int, call: LMCallEvent) -> dict[str, Any]:
    return {
        "session_id": sid, "step_index": index, "position": position,
        "model": f.text(f"{at}.model", call.model),
        "request": f.payload(f"{at}.request", redact_secrets(call.request)),
        "response": f.payload(f"{at}.response", call.response),
        "prompt_tokens": f.integer(f"{at}.prompt_tokens", call.prompt_tokens, optional=True, nonnegative=True),
        "completion_tokens": f.integer(f"{at}.completion_tokens", call.completion_tokens, optional=True,
                                       nonnegative=True),
        "latency_s": f.number(f"{at}.latency_s", call.latency_s, optional=True, nonnegative=True),
        "error": _free_text(f, f"{at}.error", call.error),
    }


def _env_event_row(f: Fields, at: str, sid: str, index: int, event: Any) -> dict[str, Any]:
    if not isinstance(event, EnvEvent):
        raise f.fail(at, "an EnvEvent or None", event)
    return {
        "session_id": sid, "step_index": index,
        "tool": f.text(f"{at}.tool", event.tool, optional=True),
        "args": f.payload(f"{at}.args", event.args),
        "result": f.payload(f"{at}.result", event.result),
        "reward": f.number(f"{at}.reward", event.reward),
        "done": f.flag(f"{at}.done", event.done),
        "truncated": f.flag(f"{at}.truncated", event.truncated),
    }


def _verification_row(f: Fields, at: str, sid: str, index: int, event: Any) -> dict[str, Any]:
    if not isinstance(event, VerificationEvent):
        raise f.fail(at, "a VerificationEvent or None", event)
    return {
        "session_id": sid, "step_index": index,
        "verifier": f.text(f"{at}.verifier", event.verifier, nonempty=True),
        "outcome": f.text(f"{at}.outcome", event.outcome, nonempty=True),
        "verdict": f.payload(f"{at}.verdict", event.verdict, mapping=True),
    }


def _event_reward_row(f: Fields, at: str, sid: str, index: int, position: int,
                      event: EventReward) -> dict[str, Any]:
    if event.kind not in EVENT_REWARD_KINDS:
        raise f.fail(f"{at}.kind", f"one of {', '.join(EVENT_REWARD_KINDS)}", event.kind)
    return {
        "session_id": sid, "step_index": index, "position": position,
        "value": f.number(f"{at}.value", event.value), "kind": event.kind,
        "key": f.text(f"{at}.key", event.key, optional=True),
        "source": f.text(f"{at}.source", event.source, nonempty=True),
        "annotation": f.payload(f"{at}.annotation", event.annotation),
    }


def _outcome_row(f: Fields, sid: str, outcome: OutcomeReward) -> dict[str, Any]:
    return {
        "session_id": sid,
        "total": f.number("outcome_reward.total", outcome.total),
        "steps": f.integer("outcome_reward.steps", outcome.steps, nonnegative=True),
        "score": f.number("outcome_reward.score", outcome.score, optional=True),
        "kind": f.text("outcome_reward.kind", outcome.kind, nonempty=True),
        "source": f.text("outcome_reward.source", outcome.source, nonempty=True),
        "annotation": f.payload("outcome_reward.annotation", outcome.annotation),
    }


def validate_session(session: SessionTrace) -> None:
    """Raise ``TraceValidationError`` (naming the session and field) if the store would refuse ``session``."""
    encode_session(session)


def decode_session(session: Mapping[str, Any], steps: Iterable[Mapping[str, Any]],
                   lm_calls: Iterable[Mapping[str, Any]], env_events: Iterable[Mapping[str, Any]],
                   verifications: Iterable[Mapping[str, Any]], event_rewards: Iterable[Mapping[str, Any]],
                   outcome: Mapping[str, Any] | None) -> SessionTrace:
    """The ``SessionTrace`` that ``encode_session`` turned into these rows (child rows in any order)."""
    calls: dict[int, list[tuple[int, LMCallEvent]]] = {}
    for r in lm_calls:
        calls.setdefault(r["step_index"], []).append((r["position"], LMCallEvent(
            model=r["model"], request=r["request"], response=r["response"], prompt_tokens=r["prompt_tokens"],
            completion_tokens=r["completion_tokens"], latency_s=r["latency_s"], error=r["error"])))
    rewards: dict[int, list[tuple[int, EventReward]]] = {}
    for r in event_rewards:
        rewards.setdefault(r["step_index"], []).append((r["position"], EventReward(
            value=r["value"], kind=r["kind"], key=r["key"], source=r["source"], annotation=r["annotation"])))
    envs = {r["step_index"]: EnvEvent(tool=r["tool"], args=r["args"], result=r["result"], reward=r["reward"],
                                      done=bool(r["done"]), truncated=bool(r["truncated"])) for r in env_events}
    verdicts = {r["step_index"]: VerificationEvent(verifier=r["verifier"], outcome=r["outcome"],
                                                   verdict=r["verdict"]) for r in verifications}
    step_list = []
    for r in sorted(steps, key=lambda row: row["step_index"]):
        i = r["step_index"]
        step_list.append(StepTrace(
            index=i, observation=r["observation"], action=r["action"], reward=r["reward"], done=bool(r["done"]),
            truncated=bool(r["truncated"]), info=r["info"],
            lm_calls=[call for _, call in sorted(calls.get(i, ()), key=lambda pair: pair[0])],
            env_event=envs.get(i), verification=verdicts.get(i),
            event_rewards=[reward for _, reward in sorted(rewards.get(i, ()), key=lambda pair: pair[0])]))
    outcome_reward = None if outcome is None else OutcomeReward(
        total=outcome["total"], steps=outcome["steps"], score=outcome["score"], kind=outcome["kind"],
        source=outcome["source"], annotation=outcome["annotation"])
    return SessionTrace(
        session_id=session["session_id"], run_id=session["run_id"], env_name=session["env_name"],
        seed=session["seed"], policy_id=session["policy_id"], correlation_id=session["correlation_id"],
        started_at=session["started_at"], ended_at=session["ended_at"], status=session["status"],
        error=session["error"], steps=step_list, outcome_reward=outcome_reward, metadata=session["metadata"])
