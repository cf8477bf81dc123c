"""The rollout loop: a policy and a fresh environment instance, turn by turn, every step recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from proofgym.core import bounded_json, model_text, redact_secrets, redact_text
from proofgym.envs import Environment, Observation, StepResult, env_hook, make, quick_to_make
from proofgym.policies import FRAME_KEY, Frame, FrameError, Policy, PolicyReply, PolicyRequest, read_frame
from proofgym.rollouts._result import RolloutResult
from proofgym.traces import (
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    VerificationEvent,
)

logger = logging.getLogger("proofgym.rollouts")


class _PolicyUnavailable(Exception):
    """The policy could not act (its model unreachable or failing): the session ends in error."""


async def run_rollout(
    env_name: str,
    *,
    seed: int,
    policy: Policy,
    env_config: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
    max_time_s: float | None = None,
    max_lm_calls: int | None = None,
    run_id: str = "adhoc",
    session_id: str | None = None,
    correlation_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    on_finish: Callable[[RolloutResult], Any] | None = None,
) -> RolloutResult:
    """Roll ``policy`` out in a fresh instance of ``env_name`` reset with ``seed``.

    Each turn the policy sees the conversation (the observation's ``system`` text if any, then the
    observations, its own replies and the tool results) and replies; the action goes to
    ``env.step``. Environment calls run in order on a pooled worker thread (steps may block, e.g. on
    a judge), or on the event loop for an environment whose ``blocking`` attribute is ``False``; the
    environment is closed however the rollout ends. At most ``max_turns`` turns
    (``None``: the environment's own limit); a rollout cut short by it has its last step marked
    ``truncated``. ``max_lm_calls`` caps the model calls the same way: a turn whose reply recorded LM calls
    counts as one (the retries of a failed request are attempts of that one call), and once ``max_lm_calls``
    such turns were played the episode ends, its last step truncated. A policy that calls no model never
    reaches it.

    An observation's rendered frame (``data.image_png_base64``) is checked and handed to the policy
    (``PolicyRequest.frame``), never put into the messages; a malformed one (not a PNG, too large) is dropped
    and the observation says why (a first ``Error:`` line, ``data.frame_error`` and the step's
    ``info["frame_error"]``). After an error observation without a frame (a refused action, a bad reply: nothing
    ran) the policy is handed the last frame again.

    Failures are recorded, not raised: a policy reply with an ``error`` is fed back as an error
    observation (the environment still charges the turn); a reply marked ``unavailable`` or an
    exception from the policy or the environment ends the session with status ``"error"``; running
    past ``max_time_s`` of wall-clock time ends it with status ``"timeout"`` (last step truncated).
    Cancellation closes the environment, records status ``"cancelled"`` and re-raises.
    ``on_finish(result)`` is called once the session is final, however it ended (also before a
    cancellation propagates). ``correlation_id`` defaults to the ``cid`` query parameter of the
    policy's ``inference_url`` when it has one. Invalid arguments (an unknown environment, a bad
    ``env_config``) raise before anything runs.

    No credential is recorded: ``metadata`` and each model call's request are recorded through
    :func:`~proofgym.core.redact_secrets` (a secret-named key at any depth, a URL's password or credential
    parameter become ``***``), and every error message (the session's, a reply's, a model call's) through
    :func:`~proofgym.core.redact_text`, whatever policy wrote them.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise ValueError(f"max_turns must be a positive integer or None, got {max_turns!r}")
    if max_lm_calls is not None and (not isinstance(max_lm_calls, int) or isinstance(max_lm_calls, bool)
                                     or max_lm_calls < 1):
        raise ValueError(f"max_lm_calls must be a positive integer or None, got {max_lm_calls!r}")
    if max_time_s is not None and not (isinstance(max_time_s, (int, float)) and math.isfinite(max_time_s)
                                       and max_time_s > 0):
        raise ValueError(f"max_time_s must be a finite number of seconds > 0 or None, got {max_time_s!r}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must have policy_id, async act() and aclose(); got {type(policy).__name__}")
    worker = _EnvWorker()
    config = dict(env_config or {})
    try:
        if quick_to_make(env_name, **config):
            env = make(env_name, **config)
        else:
            env = await worker.call(make, env_name, **config)
    except BaseException:
        worker.abandon()
        raise
    worker.adopt(env)
    session = SessionTrace(
        session_id=session_id or uuid.uuid4().hex,
        run_id=run_id,
        env_name=env_name,
        seed=seed,
        policy_id=str(policy.policy_id),
        correlation_id=correlation_id if correlation_id is not None else _cid(policy),
        started_at=time.time(),
        metadata=redact_secrets(dict(metadata or {})),
    )
    messages: list[dict[str, Any]] = []
    last: list[StepResult] = []  # the environment's last step result: its typed fields score the episode
    budget = asyncio.timeout(max_time_s)
    try:
        try:
            async with budget:
                await _play(env, worker, policy, session, messages, last, seed=seed, max_turns=max_turns,
                            max_lm_calls=max_lm_calls)
        except TimeoutError:
            if not budget.expired():
                raise
            _end(session, "timeout", f"the rollout ran past its wall-clock budget of {max_time_s:g} s")
    except asyncio.CancelledError:
        _end(session, "cancelled", "the rollout was cancelled")
        raise
    except _PolicyUnavailable as exc:
        _end(session, "error", str(exc))
    except Exception as exc:
        logger.warning("rollout %s of %s (seed %d) failed", session.session_id, env_name, seed, exc_info=True)
        _end(session, "error", model_text(f"{type(exc).__name__}: {exc}"))
    finally:
        await worker.close(env)
        result = _finish(session, messages, last[-1] if last else None)
        if on_finish is not None:
            try:
                on_finish(result)
            except Exception:
                logger.exception("on_finish raised for rollout %s", session.session_id)
    return result


async def _play(env: Environment, worker: _EnvWorker, policy: Policy, session: SessionTrace,
                messages: list[dict[str, Any]], last: list[StepResult], *, seed: int, max_turns: int | None,
                max_lm_calls: int | None = None) -> None:
    observation, frame = _checked_frame(await worker.call(env.reset, seed))
    tools: list[Mapping[str, Any]] = [dict(tool) for tool in env.tools]
    accepts_text = bool(env_hook(env, "accepts_text"))
    system = observation.data.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": observation.text})
    turn = lm_turns = 0
    while True:
        if (max_turns is not None and turn >= max_turns) or (max_lm_calls is not None and lm_turns >= max_lm_calls):
            _truncate_last(session)
            return
        turn += 1
        request = PolicyRequest(messages=[dict(m) for m in messages], tools=list(tools), turn=turn, seed=seed,
                                accepts_text=accepts_text, frame=frame)
        reply = await policy.act(request)
        if not isinstance(reply, PolicyReply):
            raise TypeError(f"policy {session.policy_id!r} returned {type(reply).__name__}, not a PolicyReply")
        lm_calls = [_clean_lm_call(call) for call in reply.lm_calls if isinstance(call, LMCallEvent)]
        lm_turns += bool(lm_calls)
        if reply.unavailable:
            error = _reply_error(reply.error or "the policy could not act")
            session.steps.append(StepTrace(index=len(session.steps), observation=observation.to_dict(),
                                           info={"error": error, "policy_unavailable": True}, lm_calls=lm_calls))
            raise _PolicyUnavailable(f"policy {session.policy_id!r} unavailable on turn {turn}: {error}")
        action = _policy_action(reply.action) if reply.error is None else None
        result = await worker.call(env.step, action)
        last[:] = [result]
        # What the environment returns is made from the cleaned action and its own data: not cleaned again
        # (an environment that returns what no encoder takes is a bug of its own: the trace store refuses NaN and
        # objects that are not JSON, and stores lone surrogates and NUL as U+FFFD).
        info = dict(result.info)
        shown = result.observation
        if reply.error is not None:
            # The environment charged the turn; the agent is told what was wrong with its reply.
            error = _reply_error(reply.error)
            shown = Observation(f"Error: {error}", {"error": error})
            info.update(error=error, policy_error=True)
        shown, checked = _checked_frame(shown)
        if "frame_error" in shown.data:
            info["frame_error"] = shown.data["frame_error"]
        if checked is not None or "error" not in info:
            frame = checked  # else the step ran nothing: the world still looks as the last frame showed it
        session.steps.append(_frames_once(_step_trace(len(session.steps), observation, action, result, info, shown,
                                                      lm_calls, session.env_name), request.frame))
        messages.append(_assistant_message(reply.message))
        messages.extend(_result_messages(messages[-1], shown.text))
        observation = shown
        if result.done:
            return


def _frames_once(step: StepTrace, shown: Frame | None) -> StepTrace:
    """``step`` with each frame stored once: a later step's observation is the previous step's result, so its
    frame stays there (``data.image_png_base64_at`` says where), and the copy the policy's request carried becomes
    a reference to the observation's (the first observation's and every result's frames are kept)."""
    where = "steps[0].observation"
    observation = step.observation
    if step.index > 0 and isinstance(observation, dict) and isinstance(observation.get("data"), dict) and \
            FRAME_KEY in observation["data"]:
        where = f"steps[{step.index - 1}].env_event.result"
        data = {key: value for key, value in observation["data"].items() if key != FRAME_KEY}
        step.observation = {**observation, "data": {**data, f"{FRAME_KEY}_at": where}}
    if shown is not None and step.lm_calls:
        url = shown.data_uri
        step.lm_calls = [_without_frame_copy(call, url, where) for call in step.lm_calls]
    return step


def _without_frame_copy(call: LMCallEvent, url: str, where: str) -> LMCallEvent:
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("url") == url:
                return {**value, "url": f"proofgym-frame:{where}.data.{FRAME_KEY}"}
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    request = walk(call.request)
    return call if request == call.request else dataclasses.replace(call, request=request)


def _checked_frame(observation: Observation) -> tuple[Observation, Frame | None]:
    """The observation and its frame, checked; a malformed frame is dropped, and the observation says why."""
    value = observation.data.get(FRAME_KEY)
    if value is None:
        return observation, None
    try:
        return observation, read_frame(value)
    except FrameError as exc:
        problem = f"the observation's frame (data.{FRAME_KEY}) cannot be shown: {exc}"
        data = {key: item for key, item in observation.data.items() if key != FRAME_KEY}
        return Observation(f"Error: {problem}\n\n{observation.text}", {**data, "frame_error": problem}), None


def _step_trace(index: int, observation: Observation, action: Any, result: StepResult, info: dict[str, Any],
                shown: Observation, lm_calls: list[LMCallEvent], env_name: str) -> StepTrace:
    reward, done, truncated = result.reward, result.done, result.truncated
    if not (action is None or isinstance(action, (str, int, float, bool, dict, list))):
        action = bounded_json(action)  # an environment's own action object: recorded as its str
    tool, args = _tool_and_args(action, info)
    verdict = result.verdict
    verification = None
    if verdict is not None and isinstance(verdict.get("outcome"), str):
        # A verdict that does not name its verifier is recorded under the environment's name.
        verification = VerificationEvent(verifier=str(verdict.get("verifier") or env_name), outcome=verdict["outcome"],
                                         verdict=dict(verdict))
    components = result.components
    event_rewards = []
    if components is not None:
        for key, value in components.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value:
                event_rewards.append(EventReward(value=float(value), kind="penalty" if value < 0 else "shaped",
                                                 key=str(key), source="environment"))
    return StepTrace(
        index=index,
        observation=observation.to_dict(),
        action=action,
        reward=float(reward),
        done=bool(done),
        truncated=bool(truncated),
        info=info,
        lm_calls=lm_calls,
        env_event=EnvEvent(tool=tool, args=args, result=shown.to_dict(), reward=float(reward), done=bool(done),
                           truncated=bool(truncated)),
        verification=verification,
        event_rewards=event_rewards,
    )


def _tool_and_args(action: Any, info: Mapping[str, Any]) -> tuple[str | None, Any]:
    """The tool an action called and its arguments, as far as they can be read (the env's word first)."""
    tool, args = info.get("tool"), action
    if isinstance(action, Mapping):
        function = action.get("function")
        if isinstance(function, Mapping):
            name, args = function.get("name"), function.get("arguments")
        else:
            name = action.get("tool", action.get("name"))
            args = action.get("args", action.get("arguments"))
        if isinstance(args, str):
            args = _decoded_arguments(args)
        if tool is None and isinstance(name, str):
            tool = name
    return (tool if isinstance(tool, str) else None), args


def _assistant_message(message: Any) -> dict[str, Any]:
    if isinstance(message, Mapping) and message.get("role") == "assistant":
        return cast("dict[str, Any]", bounded_json(dict(message)))  # a dict stays a dict
    return {"role": "assistant", "content": "" if message is None else model_text(str(message))}


def _result_messages(assistant: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
    """The messages that answer an assistant turn: one ``tool`` message per native call, else a user message."""
    calls = assistant.get("tool_calls")
    ids = [call.get("id") for call in calls if isinstance(call, Mapping)] if isinstance(calls, list) else []
    if not ids:
        return [{"role": "user", "content": text}]
    # Every call id must be answered; the environment ran only the first.
    return [{"role": "tool", "tool_call_id": str(call_id),
             "content": text if i == 0 else "Error: not run; call one tool per turn"}
            for i, call_id in enumerate(ids)]


def _cid(policy: Policy) -> str | None:
    """The ``cid`` query parameter of the policy's inference URL (the trainer's trace id), if it has one."""
    url = getattr(policy, "inference_url", None)
    if not isinstance(url, str):
        return None
    values = parse_qs(urlsplit(url).query).get("cid")
    return values[0] if values and values[0] else None


def _truncate_last(session: SessionTrace) -> None:
    if session.steps:
        last = session.steps[-1]
        last.done = last.truncated = True
        if last.env_event is not None:
            last.env_event.done = last.env_event.truncated = True


def _end(session: SessionTrace, status: str, error: str) -> None:
    session.status, session.error = status, redact_text(error)
    if status == "timeout":
        _truncate_last(session)


def _finish(session: SessionTrace, messages: list[dict[str, Any]], last: StepResult | None) -> RolloutResult:
    session.ended_at = time.time()
    total = float(sum(step.reward for step in session.steps))
    score = _outcome_score(session, last) if session.status == "ok" else None
    session.outcome_reward = OutcomeReward(total=total, steps=len(session.steps), score=score)
    return RolloutResult(session=session, messages=list(messages))


def _outcome_score(session: SessionTrace, last: StepResult | None) -> float | None:
    """1.0 / 0.0 for an episode that ended solved / unsolved (:attr:`StepResult.outcome_score` of its last step);
    ``None`` when its verification gave no outcome. An episode the loop's turn limit cut short is unsolved."""
    if not session.steps or last is None:
        return None
    if session.steps[-1].truncated:
        return 0.0  # the turns ran out before a terminal action: not solved
    return last.outcome_score


def _policy_action(action: Any) -> Any:
    """The action as the environment gets it and the trace records it: data a policy wrote under the one rule
    for untrusted text (:func:`~proofgym.core.bounded_json`); an object that is not JSON data (an
    environment's own action type) goes to the environment as it is and is recorded as its ``str``."""
    if action is None or isinstance(action, (str, int, float, bool, Mapping, list, tuple)):
        return bounded_json(action)
    return action


def _decoded_arguments(text: str) -> Any:
    """A tool call's JSON-encoded arguments, decoded when they are JSON (depth-bounded), else the text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder's recursion limit
        return text
    return bounded_json(value)


def _reply_error(error: Any) -> str:
    """A policy's error as the trace records it and the agent is shown it: under the one rule for untrusted text,
    with no credential it may quote (a URL the policy failed to reach)."""
    return redact_text(model_text(str(error)))


def _clean_lm_call(call: LMCallEvent) -> LMCallEvent:
    request, response = redact_secrets(bounded_json(call.request)), bounded_json(call.response)
    error = None if call.error is None else _reply_error(call.error)
    model = model_text(str(call.model))
    if request is call.request and response is call.response and error == call.error and model == call.model:
        return call
    return dataclasses.replace(call, model=model, request=request, response=response, error=error)


class _EnvWorker:
    """Runs one environment's calls in order: on a shared pool of worker threads (steps may block, e.g. on
    a judge), or inline on the event loop once the environment says its calls never block
    (``blocking = False``: short CPU work, such as a rule kernel's check).

    A call still running when the rollout stops (a cancelled or timed-out step) keeps running;
    ``close`` queues ``env.close()`` behind it, so closing never races a step.
    """

    def __init__(self) -> None:
        self._last: Future[Any] | None = None
        self.inline = False

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.inline:
            return fn(*args, **kwargs)
        self._last = _env_threads().submit(fn, *args, **kwargs)
        return await asyncio.wrap_future(self._last)

    def adopt(self, env: Environment) -> None:
        """Run ``env``'s later calls inline when it declares that they never block."""
        self.inline = env_hook(env, "blocking") is False

    async def close(self, env: Environment) -> None:
        last = self._last
        if last is not None and not last.done():
            _env_threads().submit(_close_after, last, env)  # behind the abandoned call; nobody waits
        elif self.inline:
            _close_quietly(env)
        else:
            await asyncio.shield(asyncio.wrap_future(_env_threads().submit(_close_quietly, env)))

    def abandon(self) -> None:
        """Stop after ``make`` failed or was cancelled: an environment it still builds is closed once built."""
        if self._last is not None and not self._last.done():
            self._last.add_done_callback(_close_made)


_POOL_LOCK = threading.Lock()
_POOL: tuple[int, ThreadPoolExecutor] | None = None
# Threads are reused across rollouts (starting one per rollout cost more than a short step); the bound
# only caps how many blocking calls run at once, far above any app's concurrency.
_POOL_THREADS = 512


def _env_threads() -> ThreadPoolExecutor:
    """The process's pool for environment calls (a forked child makes its own)."""
    global _POOL
    pool = _POOL
    if pool is None or pool[0] != os.getpid():
        with _POOL_LOCK:
            pool = _POOL
            if pool is None or pool[0] != os.getpid():
                pool = _POOL = (os.getpid(), ThreadPoolExecutor(_POOL_THREADS, thread_name_prefix="proofgym-env"))
    return pool[1]


def _close_after(call: Future[Any], env: Environment) -> None:
    futures_wait([call])
    _close_quietly(env)


def _close_made(future: Future[Any]) -> None:
    if not future.cancelled() and future.exception() is None:
        _close_quietly(future.result())


def _close_quietly(env: Environment) -> None:
    try:
        env.close()
    except Exception:
        logger.exception("closing environment %r failed", env)
