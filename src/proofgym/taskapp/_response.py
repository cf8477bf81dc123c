"""A finished rollout as the task app's response: trajectory, metrics, pipeline metadata and trace.

The response carries what the policy and the environment wrote (actions, observations, ``info``, the
verdict, the trace). :func:`response_body` encodes it as it is when that gives JSON every client reads (the
common case: the rollout loop records under the one rule for untrusted data), and otherwise builds it again
with every such value through :func:`~proofgym.core.bounded_json` and every such string through
:func:`~proofgym.core.model_text`, which cannot fail: whatever the trajectory holds (a lone surrogate, a NaN,
data nested past any encoder's recursion, an integer of 5,000 digits, an object that is not JSON), a rollout
that was stored is also answered. (Bounding every response would cost a walk in Python over all of it, several
times pydantic's encoding.)

**Tool calls.** Every step's ``tool_calls`` has one shape, OpenAI's, whichever policy acted: a list of
``{"id": str, "type": "function", "function": {"name": str, "arguments": str}}``, ``arguments`` being the
call's arguments as a JSON object in text. A native tool call keeps its id and its arguments text as the model
sent them; a ``{"tool", "args"}`` action (scripted, oracle, a JSON call in a model's text) gets the id
``call_<step>`` and its ``args`` as JSON; a plain-text reply the environment took as its action is the call of
the tool the environment ran it as (``info.tool``, e.g. ``answer``; else ``text``) with arguments
``{"text": <the reply>}``. A step without an action (a reply the policy could not turn into one) has none.

**Correlation.** The inference URL is echoed as the request sent it, less its credentials (a password, an
``api_key`` parameter: :func:`~proofgym.core.redact_url`; the ``cid`` stays), ``""`` when it sent none (the
reference client reads a string), in the trajectory, the pipeline metadata and every step's ``info.meta``,
beside the correlation id.

**Traces** (``record.return_trace``): ``compact`` is a summary of the session: ids, status, sizes, rewards and
token counts (:func:`compact_trace`); ``structured`` is that summary with ``format: "structured"`` and
``session_trace``, the session in the reference's v3 trace shape (:mod:`proofgym.taskapp._session_trace`), which
is what the reference's eval client stores; ``full`` is proofgym's own session (``SessionTrace.to_dict()``,
what ``proofgym eval`` stores and ``proofgym traces`` reads) with the same v3 ``session_trace`` as one more
top-level key (a reader of proofgym's session drops that key before ``SessionTrace.from_dict``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Callable, Literal, Mapping, cast

from proofgym.core import (
    MAX_INT_DIGITS,
    bounded_json,
    has_digit_run,
    model_text,
    redact_url,
)
from proofgym.http import json_bytes
from proofgym.taskapp._models import (
    PipelineMetadata,
    RolloutMetrics,
    RolloutRequest,
    RolloutResponse,
    RolloutStep,
    RolloutTrajectory,
)
from proofgym.taskapp._session_trace import session_trace_v3
from proofgym.traces import SessionTrace, StepTrace

_TASK_ID_KEYS = ("task_id", "problem_id", "record_id", "id")


def task_id(observation: Any, env_name: str, seed: int) -> str:
    """The id of the task an observation shows (a problem or record id), else ``ENV:SEED``."""
    data = observation.get("data") if isinstance(observation, Mapping) else None
    for source in (data, observation):
        if isinstance(source, Mapping):
            for key in _TASK_ID_KEYS:
                if isinstance(source.get(key), (str, int)) and not isinstance(source.get(key), bool):
                    return str(bounded_json(source[key]))  # a str comes back through model_text
    return f"{env_name}:{seed}"


def tool_calls(step: StepTrace, data: Callable[[Any], Any] = lambda value: value) -> list[dict[str, Any]]:
    """A step's action as the contract's ``tool_calls``: OpenAI's function-call shape whatever the policy (see
    the module docstring); ``data`` is applied to the arguments before they are encoded."""
    action = step.action
    if action is None:
        return []
    call_id = f"call_{step.index}"
    tool = step.env_event.tool if step.env_event is not None else None
    if isinstance(action, Mapping):
        function = action.get("function")
        if isinstance(function, Mapping):
            name, arguments = function.get("name"), function.get("arguments")
            if isinstance(action.get("id"), str) and action["id"]:
                call_id = action["id"]
        else:
            name, arguments = action.get("tool", action.get("name")), action.get("args", action.get("arguments"))
        name = name if isinstance(name, str) and name else (tool or "unknown")
    else:
        name, arguments = tool or "text", {"text": action if isinstance(action, str) else str(action)}
    if not isinstance(arguments, str):
        arguments = json.dumps({} if arguments is None else data(arguments), ensure_ascii=False)
    return [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]


def compact_trace(session: SessionTrace) -> dict[str, Any]:
    """A session's summary: ids, status, sizes, rewards and token counts, without the steps."""
    calls = [call for step in session.steps for call in step.lm_calls]
    return {
        "format": "compact",
        "session_id": session.session_id,
        "run_id": session.run_id,
        "correlation_id": session.correlation_id,
        "env_name": session.env_name,
        "seed": session.seed,
        "policy_id": session.policy_id,
        "status": session.status,
        "error": session.error,
        "num_steps": len(session.steps),
        "total_reward": session.total_reward,
        "outcome_reward": None if session.outcome_reward is None else asdict(session.outcome_reward),
        "lm_calls": len(calls),
        "prompt_tokens": sum(call.prompt_tokens or 0 for call in calls),
        "completion_tokens": sum(call.completion_tokens or 0 for call in calls),
        "started_at": session.started_at,
        "ended_at": session.ended_at,
    }


def build_response(request: RolloutRequest, session: SessionTrace, *, env_name: str, policy_id: str,
                   outcome_score: float | None, verdict: Any, invalid_reason: str | None,
                   correlation_id: str | None,
                   trace_format: Literal["compact", "structured", "full"] | None,
                   judging: Mapping[str, Any] | None = None, bound: bool = True) -> RolloutResponse:
    """The response to ``request`` for the finished ``session``. With ``bound`` (the default), every value and
    string the session holds is bounded (see the module docstring), so that encoding the response cannot fail;
    without, they are copied as they are.

    The inference URL is echoed as the request sent it less its credentials (``""`` for none), in the trajectory,
    every step's ``info.meta`` and the pipeline metadata, beside the correlation id.
    """
    data, text = (bounded_json, _text) if bound else (_same, _same)
    url = redact_url(request.policy.config.inference_url or "")
    echo = {"inference_url": url, "trace_correlation_id": correlation_id}
    built: dict[int, list[dict[str, Any]]] = {}  # each step's tool_calls, built once for the steps and the v3 trace

    def calls_of(step: StepTrace) -> list[dict[str, Any]]:
        if id(step) not in built:
            built[id(step)] = tool_calls(step, data)
        return built[id(step)]

    steps = [_step(step, echo, data, calls_of(step)) for step in session.steps] if request.record.trajectories else []
    total = session.total_reward
    first = session.steps[0].observation if session.steps else None
    error = text(session.error)
    invalid_reason = text(invalid_reason)
    shown_policy_id = cast(str, text(policy_id))  # a str stays a str
    final = data({
        "observation": _final_observation(session.steps[-1]) if session.steps else None,
        "total_return": total,
        "outcome_score": outcome_score,
        "invalid_reason": invalid_reason,
        "verdict": verdict,
        "status": session.status,
        "error": error,
    })
    trajectory = RolloutTrajectory(
        env_id=request.env.env_id or session.session_id,
        policy_id=shown_policy_id,
        steps=steps,
        final=final,
        length=len(session.steps),
        **echo,
    )
    metrics = RolloutMetrics(episode_returns=[total], mean_return=total, num_steps=len(session.steps),
                             outcome_score=outcome_score, invalid_reason=invalid_reason,
                             details={"status": session.status, "session_id": session.session_id,
                                      **({} if judging is None else {"judging": data(dict(judging))})})
    metadata = PipelineMetadata(
        reward_score=total,
        policy_id=shown_policy_id,
        env_name=env_name,
        task_id=task_id(first, env_name, request.env.seed),
        task_split=_split(request),
        seed=request.env.seed,
        session_id=session.session_id,
        **echo,
    )
    trace = None
    if trace_format == "compact":
        trace = compact_trace(session)
    elif trace_format in ("structured", "full"):
        v3 = session_trace_v3(session, calls_of, data=data)
        if trace_format == "full":
            trace = {**session.to_dict(), "session_trace": v3}
        else:
            trace = {**compact_trace(session), "format": "structured", "session_trace": v3}
    return RolloutResponse(
        run_id=request.run_id,
        trajectories=[trajectory],
        metrics=metrics,
        aborted=session.status != "ok",
        ops_executed=2 * len(session.steps),
        status=session.status,
        error=error,
        trace=None if trace is None else data(trace),
        trace_correlation_id=correlation_id,
        pipeline_metadata=metadata,
    )


def response_body(request: RolloutRequest, session: SessionTrace, **details: Any) -> bytes:
    """The JSON body answering ``request`` for ``session`` (``details``: :func:`build_response`'s keywords):
    the session as it is when pydantic encodes it (it refuses lone surrogates, objects that are not JSON and
    data nested past its own depth limit, and writes NaN as ``null``) without a run of more than 1000 digits
    (an integer clients could not read: Python's refuses more than 4300), else built with every value bounded.
    """
    try:
        body = build_response(request, session, bound=False, **details).model_dump_json().encode("utf-8")
    except (ValueError, TypeError, RecursionError):  # pydantic's validation and serialization errors are ValueErrors
        body = None
    if body is not None and not has_digit_run(body, MAX_INT_DIGITS):
        return body
    return encode_response(build_response(request, session, **details))


def encode_response(response: RolloutResponse) -> bytes:
    """The JSON body of ``response``: pydantic's encoder (fast), or, should that refuse a value no field
    bounded, the same data through :func:`~proofgym.http.json_bytes` (which cannot refuse any)."""
    try:
        return response.model_dump_json().encode("utf-8")
    except (ValueError, TypeError, RecursionError):  # pydantic's serialization errors are ValueErrors
        return json_bytes(response.model_dump())


def _step(step: StepTrace, echo: Mapping[str, Any], data: Callable[[Any], Any],
          calls: list[dict[str, Any]]) -> RolloutStep:
    observation = step.observation if isinstance(step.observation, Mapping) else {"text": step.observation}
    return RolloutStep(obs=data(dict(observation)), tool_calls=calls,
                       reward=step.reward, done=step.done, truncated=step.truncated,
                       info={**data(dict(step.info)), "meta": dict(echo)})


def _text(value: str | None) -> str | None:
    return None if value is None else model_text(str(value))


def _same(value: Any) -> Any:
    return value


def _final_observation(step: StepTrace) -> Any:
    """What the environment answered to the last action (the episode's closing observation)."""
    if step.env_event is not None:
        return step.env_event.result
    return None


def _split(request: RolloutRequest) -> str | None:
    split = request.env.config.get("split")
    return model_text(split) if isinstance(split, str) else None
