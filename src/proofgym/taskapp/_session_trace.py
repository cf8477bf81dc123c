"""A proofgym session in the reference's v3 trace shape (synth-ai's ``tracing_v3`` ``SessionTrace.to_dict()``).

A rollout response's ``structured`` trace carries it as ``session_trace``, which is what the reference's eval
client stores into its own trace database. The mapping, per step ``i`` of the session (``step_id`` ``"step_i"``,
``turn_number`` ``i + 1``):

- a **timestep** ``{step_id, step_index, timestamp, turn_number, events, markov_blanket_messages,
  step_metadata, completed_at}``; ``step_metadata`` holds the step's reward, ``done``/``truncated``, the
  verification outcome and the step's ``info``;
- **events**: a *runtime* event (``actions: []``; metadata: the step's ``tool_calls`` in the response's shape,
  and a summary of its LM calls: model, tokens, latency, error), then an *environment* event (``reward``,
  ``terminated``, ``truncated``, ``system_state_before`` = the observation acted on, ``system_state_after`` =
  the environment's answer; metadata: tool, args, verification). Each LM call is also an *LM* event
  (``model_name``, ``input_tokens``, ``output_tokens``, ``total_tokens``, ``latency_ms``, ``call_records``
  with the request's messages and the response) in its timestep's ``events`` only, not in ``event_history``:
  the reference's eval client rebuilds an event without ``actions`` or ``reward`` as a bare event, which its
  storage refuses (``TypeError``), so listing one there would end that client's run;
- **messages** (``markov_blanket_messages``, and all of them in order in ``markov_blanket_message_history``):
  on the first step a ``system`` message (the observation's system text, if any) and a ``user`` message (the
  task as the agent sees it), then per step an ``assistant`` message (the action: its text, and its tool
  calls as ``json_payload``) and a ``tool_result`` message (the environment's answer);
- **event rewards** (``event_rewards``, as the reference reads them back from its database): one per reward
  component a step paid (``reward_value``, ``reward_type`` shaped / penalty / ..., ``key``, ``source``,
  ``turn_number``, and ``event_index``: the environment event's position in ``event_history``);
- the **outcome reward** (``outcome_rewards``): ``total_reward`` (the return), ``total_steps``,
  ``achievements_count`` 0, and ``reward_metadata`` with the outcome score, kind, source and session status.

The session's ``metadata`` carries its ids (run, correlation id, proofgym session id), environment, seed,
policy, status and error. Steps are not timed one by one: every timestamp is the session's start, but the
last step's ``completed_at``, which is its end.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from proofgym.traces import LMCallEvent, SessionTrace, StepTrace

Data = Callable[[Any], Any]


def session_trace_v3(session: SessionTrace, tool_calls: Callable[[StepTrace], list[dict[str, Any]]], *,
                     data: Data = lambda value: value) -> dict[str, Any]:
    """``session`` as a v3 ``SessionTrace`` dict (see the module docstring). ``tool_calls(step)`` gives a step's
    tool calls as the response states them; ``data`` is applied to each payload taken from the session (the
    response bounds them with it)."""
    started = _iso(session.started_at)
    ended = _iso(session.ended_at if session.ended_at is not None else session.started_at)
    start_time = float(session.started_at)
    steps: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    event_rewards: list[dict[str, Any]] = []
    for step in session.steps:
        step_id = f"step_{step.index}"
        turn = step.index + 1
        time_record = {"event_time": start_time, "message_time": turn}
        calls = data(tool_calls(step))
        lm_events = [_lm_event(call, step_id, time_record, data) for call in step.lm_calls]
        runtime: dict[str, Any] = {"system_instance_id": "policy", "time_record": time_record, "actions": [],
                   "metadata": {"step_id": step_id, "tool_calls": calls,
                                "lm_calls": [_lm_summary(call) for call in step.lm_calls]},
                   "event_metadata": None}
        env_event = step.env_event
        environment = {
            "system_instance_id": session.env_name, "time_record": time_record,
            "reward": float(step.reward), "terminated": bool(step.done and not step.truncated),
            "truncated": bool(step.truncated),
            "system_state_before": data(_as_state(step.observation)),
            "system_state_after": data(_as_state(None if env_event is None else env_event.result)),
            "metadata": data({"step_id": step_id, "tool": None if env_event is None else env_event.tool,
                              "args": None if env_event is None else env_event.args,
                              "verification": None if step.verification is None else {
                                  "verifier": step.verification.verifier, "outcome": step.verification.outcome}}),
            "event_metadata": None,
        }
        environment_index = len(history) + 1
        history += [runtime, environment]
        step_messages = _messages(step, step_id, time_record, calls, data)
        messages += step_messages
        for reward in step.event_rewards:
            event_rewards.append({"event_index": environment_index, "step_id": step_id, "turn_number": turn,
                                  "reward_value": float(reward.value), "reward_type": reward.kind, "key": reward.key,
                                  "annotation": data(reward.annotation), "source": reward.source})
        steps.append({
            "step_id": step_id, "step_index": step.index, "timestamp": started, "turn_number": turn,
            "events": [*lm_events, runtime, environment], "markov_blanket_messages": step_messages,
            "step_metadata": data({"reward": step.reward, "done": step.done, "truncated": step.truncated,
                                   "outcome": None if step.verification is None else step.verification.outcome,
                                   "info": dict(step.info)}),
            "completed_at": ended if step is session.steps[-1] else None,
        })
    outcome = session.outcome_reward
    outcome_rewards = [] if outcome is None else [{
        "total_reward": float(outcome.total), "achievements_count": 0, "total_steps": outcome.steps,
        "reward_metadata": data({"score": outcome.score, "kind": outcome.kind, "source": outcome.source,
                                 "status": session.status, "annotation": outcome.annotation})}]
    return {
        "session_id": session.session_id,
        "created_at": started,
        "session_time_steps": steps,
        "event_history": history,
        "markov_blanket_message_history": messages,
        "metadata": data({"source": "proofgym", "proofgym_session_id": session.session_id, "run_id": session.run_id,
                          "trace_correlation_id": session.correlation_id, "env_name": session.env_name,
                          "seed": session.seed, "policy_id": session.policy_id, "status": session.status,
                          "error": session.error, "started_at": session.started_at, "ended_at": session.ended_at,
                          **dict(session.metadata)}),
        "session_metadata": None,
        "event_rewards": event_rewards,
        "outcome_rewards": outcome_rewards,
    }


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(float(timestamp), tz=timezone.utc).isoformat()


def _as_state(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return None if value is None else dict(value)
    return {"text": value}


def _observation_text(value: Any) -> str | None:
    if isinstance(value, Mapping):
        text = value.get("text")
        return text if isinstance(text, str) else None
    return value if isinstance(value, str) else None


def _message(kind: str, text: Any, step_id: str, time_record: Mapping[str, Any], *, payload: Any = None,
             sender: str, receiver: str) -> dict[str, Any]:
    return {"content": {"text": text if isinstance(text, str) else None,
                        "json_payload": None if payload is None else json.dumps(payload, ensure_ascii=False)},
            "message_type": kind, "time_record": dict(time_record),
            "metadata": {"step_id": step_id, "from_system_role": sender, "to_system_role": receiver}}


def _messages(step: StepTrace, step_id: str, time_record: Mapping[str, Any], calls: list[dict[str, Any]],
              data: Data) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if step.index == 0:
        observation = step.observation if isinstance(step.observation, Mapping) else {}
        system = (observation.get("data") or {}).get("system") if isinstance(observation.get("data"), Mapping) \
            else None
        if isinstance(system, str) and system:
            out.append(_message("system", data(system), step_id, time_record, sender="environment", receiver="agent"))
        out.append(_message("user", data(_observation_text(step.observation)), step_id, time_record,
                            sender="environment", receiver="agent"))
    action = step.action
    out.append(_message("assistant", data(action) if isinstance(action, str) else None, step_id, time_record,
                        payload=calls or None, sender="agent", receiver="environment"))
    result = None if step.env_event is None else step.env_event.result
    out.append(_message("tool_result", data(_observation_text(result)), step_id, time_record,
                        sender="environment", receiver="agent"))
    return out


def _lm_summary(call: LMCallEvent) -> dict[str, Any]:
    return {"model": call.model, "input_tokens": call.prompt_tokens, "output_tokens": call.completion_tokens,
            "latency_ms": None if call.latency_s is None else round(call.latency_s * 1000), "error": call.error}


def _lm_event(call: LMCallEvent, step_id: str, time_record: Mapping[str, Any], data: Data) -> dict[str, Any]:
    tokens = None
    if call.prompt_tokens is not None or call.completion_tokens is not None:
        tokens = (call.prompt_tokens or 0) + (call.completion_tokens or 0)
    request = call.request if isinstance(call.request, Mapping) else {}
    return {
        "system_instance_id": "lm", "time_record": dict(time_record),
        "model_name": call.model, "provider": None, "input_tokens": call.prompt_tokens,
        "output_tokens": call.completion_tokens, "total_tokens": tokens, "cost_usd": None,
        "latency_ms": None if call.latency_s is None else round(call.latency_s * 1000),
        "span_id": None, "trace_id": None, "system_state_before": None, "system_state_after": None,
        "call_records": [data({"api_type": "chat_completions", "model_name": call.model,
                               "input_messages": request.get("messages"), "request": call.request,
                               "response": call.response, "error": call.error})],
        "metadata": {"step_id": step_id}, "event_metadata": None,
    }
