"""A policy backed by an OpenAI-compatible chat completions server: vLLM, a hosted API, or a local server."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from proofgym.core import (
    EXCERPT_CHARS,
    redact_secrets,
    redact_text,
    redact_url,
    usage_counts,
)
from proofgym.http import ChatAttempt, ChatClient, RetryPolicy, chat_completions_url
from proofgym.policies._frames import FRAME_KEY, with_frame, without_views
from proofgym.policies._protocol import PolicyReply, PolicyRequest
from proofgym.policies._text_calls import (
    message_text,
    read_text_action,
    with_tool_instructions,
)
from proofgym.traces import LMCallEvent

if TYPE_CHECKING:
    import httpx

ToolMode = Literal["auto", "native", "json"]
TOOL_MODES: tuple[str, ...] = ("auto", "native", "json")
# Request keys the policy owns; extra_body may set any other (stop, seed, logprobs, chat_template_kwargs...).
_RESERVED_KEYS = frozenset({"model", "messages", "tools", "stream", "n"})
logger = logging.getLogger("proofgym.policies")


@dataclass(frozen=True)
class _Answer:
    """The end of one POST (after retries): the response payload, or why there is none."""

    payload: dict[str, Any] | None = None
    error: str | None = None
    tools_rejected: bool = False


class OpenAIChatPolicy:
    """Acts by calling ``POST {inference_url}/chat/completions`` (async, httpx).

    Tool calls: ``tool_mode="native"`` sends the tools and reads native ``tool_calls``; ``"json"``
    describes the tools in the system message and reads exactly one ``{"tool": ..., "args": {...}}``
    object from the reply text; ``"auto"`` (default) starts native, reads a text reply as JSON in
    text, and switches to ``"json"`` for good when the server rejects ``tools`` (HTTP 400/422
    mentioning tools). A reply with no tool call is the action itself when the environment takes
    text (``request.accepts_text``), else an error the agent is shown.

    Frames: with ``use_vision`` the last observation's frame (``request.frame``) is sent beside its
    text as an ``image_url`` content part (a ``data:image/png;base64`` URI); with ``image_only_mode``
    (which implies ``use_vision``) the frame is sent with a one-line instruction instead of any
    observation's text. A request without a frame is sent as text (said once, as a warning) under
    ``use_vision``, and is an error that ends the session under ``image_only_mode``.

    Each HTTP attempt is recorded as an :class:`~proofgym.traces.LMCallEvent` (request body,
    response, token usage, latency, error), with no credential in it: the ``Authorization`` header is not
    part of the record, a credential ``extra_body`` carries (a secret-named key at any depth, a URL's
    password or credential parameter) is recorded as ``***``, and an error that quotes one (a server
    echoing the request) has it taken out. 429, 5xx, timeouts and connection or read errors are
    retried up to ``max_retries`` times with jittered exponential backoff, waiting ``Retry-After``
    when the server sends it (at most ``max_retry_after_s``); other 4xx are not retried. ``timeout_s``
    bounds each attempt's whole wall-clock time. ``act`` never raises on what the server or the model
    sends: a failed call is a reply with ``error`` and ``unavailable=True``, a model reply that holds
    no usable action one with ``error`` alone.

    ``api_key`` is sent as ``Authorization: Bearer``. ``client`` is an ``httpx.AsyncClient`` to use
    (and leave open); otherwise the policy makes its own and ``aclose`` closes it. One instance can
    serve many concurrent rollouts.
    """

    def __init__(
        self,
        model: str,
        inference_url: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int = 1024,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        tool_mode: ToolMode = "auto",
        extra_body: Mapping[str, Any] | None = None,
        client: httpx.AsyncClient | None = None,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        max_retry_after_s: float = 60.0,
        policy_id: str | None = None,
        use_vision: bool = False,
        image_only_mode: bool = False,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        _check_number("temperature", temperature, low=0.0, high=2.0)
        if top_p is not None:
            _check_number("top_p", top_p, low=0.0, high=1.0, low_open=True)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        _check_number("timeout_s", timeout_s, low=0.0, low_open=True)
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if tool_mode not in TOOL_MODES:
            raise ValueError(f"tool_mode must be one of {list(TOOL_MODES)}, got {tool_mode!r}")
        for name, value in (("backoff_base_s", backoff_base_s), ("backoff_max_s", backoff_max_s),
                            ("max_retry_after_s", max_retry_after_s)):
            _check_number(name, value, low=0.0)
        extra = dict(extra_body or {})
        reserved = sorted(_RESERVED_KEYS & set(extra))
        if reserved:
            raise ValueError(f"extra_body must not set {reserved}: the policy sets them")
        try:
            json.dumps(extra, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"extra_body must be JSON-serialisable: {exc}") from None
        if api_key is not None and (not isinstance(api_key, str) or not api_key or "\n" in api_key):
            raise ValueError("api_key must be a non-empty single-line string")
        for name, value in (("use_vision", use_vision), ("image_only_mode", image_only_mode)):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {value!r}")
        self.model = model
        self.inference_url = inference_url
        self.url = chat_completions_url(inference_url, name="inference_url")
        self.policy_id = policy_id or f"openai:{model}"
        self.temperature = float(temperature)
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.tool_mode = tool_mode
        self.extra_body = extra
        # What the record shows of extra_body: the same object unless it holds a credential (then redacted).
        self._recorded_extra = redact_secrets(extra)
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.max_retry_after_s = float(max_retry_after_s)
        self.use_vision = use_vision or image_only_mode
        self.image_only_mode = image_only_mode
        self._said_no_frame = False
        self._native = tool_mode != "json"
        retry = RetryPolicy(max_retries=max_retries, backoff_base_s=self.backoff_base_s,
                            backoff_max_s=self.backoff_max_s, max_retry_after_s=self.max_retry_after_s)
        self._chat = ChatClient(self.url, api_key=api_key, timeout_s=self.timeout_s, retry=retry, client=client)

    @property
    def native_tools(self) -> bool:
        """Whether the next call sends the tools natively (``False`` after an ``auto`` fallback)."""
        return self._native

    async def act(self, request: PolicyRequest) -> PolicyReply:
        calls: list[LMCallEvent] = []
        try:
            return await self._act(request, calls)
        except Exception as exc:  # a bug here must end the session as an error, not crash the loop
            return _failed(calls, redact_text(f"the policy failed: {type(exc).__name__}: {exc}"))

    async def aclose(self) -> None:
        """Close the HTTP client the policy made (a client passed in stays open)."""
        await self._chat.aclose()

    async def _act(self, request: PolicyRequest, calls: list[LMCallEvent]) -> PolicyReply:
        if self.use_vision and request.frame is None:
            if self.image_only_mode:
                return _failed(calls, f"image_only_mode: the observation of turn {request.turn} carries no frame "
                                      f"(data.{FRAME_KEY}) to show the model; an environment that renders frames "
                                      "does so with use_vision = true in its config")
            if not self._said_no_frame:
                self._said_no_frame = True
                logger.warning("use_vision: the observation of turn %d carries no frame (data.%s), so the model is "
                               "shown its text; an environment that renders frames does so with use_vision = true "
                               "in its config (said once per policy)", request.turn, FRAME_KEY)
        native = self._native and bool(request.tools)
        answer = await self._post(self._body(request, native=native), calls)
        if answer.tools_rejected and self.tool_mode == "auto":
            self._native = False  # the server does not take tools: JSON in text from now on
            answer = await self._post(self._body(request, native=False), calls)
        if answer.payload is None:
            return _failed(calls, answer.error or "no response")
        return _read_reply(answer.payload, request, calls)

    def _body(self, request: PolicyRequest, *, native: bool) -> dict[str, Any]:
        messages = without_views(request.messages) if self.image_only_mode else \
            [dict(message) for message in request.messages]
        if not native:
            messages = with_tool_instructions(messages, request.tools, accepts_text=request.accepts_text)
        if self.use_vision and request.frame is not None:
            messages = with_frame(messages, request.frame)
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                "max_tokens": self.max_tokens}
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if native:
            body["tools"] = [dict(tool) for tool in request.tools]
        body.update(self.extra_body)
        return body

    async def _post(self, body: dict[str, Any], calls: list[LMCallEvent]) -> _Answer:
        recorded = body if self._recorded_extra is self.extra_body else {**body, **self._recorded_extra}

        def record(result: ChatAttempt) -> None:
            prompt_tokens, completion_tokens = usage_counts(result.payload)
            response = result.payload
            if response is None and result.status is not None:
                response = {"status": result.status, "body": result.body_excerpt}
            calls.append(LMCallEvent(model=self.model, request=recorded, response=response,
                                     prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                     latency_s=result.latency_s, error=result.error))

        answer = await self._chat.complete(body, on_attempt=record)
        last = answer.last
        if answer.error is None:
            return _Answer(payload=last.payload)
        if last.status in (400, 422) and "tools" in body and "tool" in last.body_excerpt.lower():
            return _Answer(error=last.error, tools_rejected=True)
        return _Answer(error=answer.error)

    def __repr__(self) -> str:
        vision = ", image_only_mode=True" if self.image_only_mode else ", use_vision=True" if self.use_vision else ""
        return (f"OpenAIChatPolicy(model={self.model!r}, url={redact_url(self.url)!r}, tool_mode={self.tool_mode!r}"
                f"{vision})")


def read_chat_reply(payload: Mapping[str, Any], request: PolicyRequest,
                    lm_calls: list[LMCallEvent] | None = None) -> PolicyReply:
    """The action in an OpenAI chat completion ``payload``, read as :class:`OpenAIChatPolicy` reads its server's
    answer (one native tool call, else one JSON call or, where the environment takes text, the answer in the text):
    for a caller that got the completion by other means (the inspect_ai episode solver)."""
    return _read_reply(payload, request, list(lm_calls or []))


def _read_reply(payload: Mapping[str, Any], request: PolicyRequest, calls: list[LMCallEvent]) -> PolicyReply:
    """The action in a chat completion: its one native tool call, or one JSON call (or the answer) in its text."""
    choices = payload.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(choice, Mapping) or not isinstance(message, Mapping):
        return _failed(calls, "the server's response has no choices[0].message")
    content = message_text(message.get("content"))
    finish = choice.get("finish_reason")
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        return _failed(calls, "the server's response has a tool_calls field that is not a list")
    if tool_calls:
        return _native_call(tool_calls, content, request, calls)
    assistant = {"role": "assistant", "content": content}
    parsed = read_text_action(content, accepts_text=request.accepts_text or not request.tools)
    if parsed.error is not None:
        cut = " (the reply was cut off at max_tokens)" if finish == "length" else ""
        return PolicyReply(None, assistant, calls, error=parsed.error + cut)
    return PolicyReply(parsed.action, assistant, calls)


def _native_call(tool_calls: list[Any], content: str, request: PolicyRequest,
                 calls: list[LMCallEvent]) -> PolicyReply:
    rendered = json.dumps(tool_calls, default=str)[:EXCERPT_CHARS]
    as_text = {"role": "assistant", "content": f"{content}\n{rendered}".strip()}
    if len(tool_calls) != 1:
        return PolicyReply(None, as_text, calls,
                           error=f"the reply has {len(tool_calls)} tool calls; call exactly one tool per turn")
    call = tool_calls[0]
    function = call.get("function") if isinstance(call, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(name, str) or not name:
        return PolicyReply(None, as_text, calls, error="the tool call has no function name")
    arguments = function.get("arguments")
    if isinstance(arguments, Mapping):
        arguments = json.dumps(arguments)
    elif arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        return PolicyReply(None, as_text, calls, error="the tool call's arguments are neither a JSON string "
                                                       "nor an object")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{request.turn}"
    action = {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}
    return PolicyReply(action, {"role": "assistant", "content": content or None, "tool_calls": [action]}, calls)


def _failed(calls: list[LMCallEvent], error: str) -> PolicyReply:
    return PolicyReply(None, {"role": "assistant", "content": ""}, calls, error=error, unavailable=True)


def _check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                  low_open: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (low is None or (value > low if low_open else value >= low)) and (high is None or value <= high)
    if not ok:
        bounds = " ".join(part for part in (
            "" if low is None else (f"> {low:g}" if low_open else f">= {low:g}"),
            "" if high is None else f"and <= {high:g}") if part)
        raise ValueError(f"{name} must be a finite number {bounds}, got {value!r}")
