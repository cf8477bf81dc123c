"""The LLM judge: any OpenAI-compatible chat completions endpoint asked for rubric verdicts, hack-resistant and never
crashing.

Each :class:`~proofgym.judges.JudgeItem` (in chunks of at most ``max_criteria`` criteria) becomes a
:class:`~proofgym.core.Claim` run through a :class:`~proofgym.runtime.VerificationRuntime`, so verdicts are cached
by content (rubric, criteria, goal, level, candidate, judge model, prompt version, sampling parameters), identical
items of one batch (a GRPO group's repeats) are judged once, and calls are timed out and retried. Per call:

- the prompt delimits and escapes the candidate (:mod:`proofgym.judges._prompt`); the answer is read with
  :func:`~proofgym.judges._parse.parse_verdicts` (the final verdict, every criterion exactly once, on its scale);
- ``structured="auto"`` asks for a JSON-schema ``response_format`` and, when the server refuses it, asks in text
  from then on (counted in :meth:`LLMJudge.metrics`);
- an unusable answer is asked again once: the same question with a note saying what was wrong, in fixed words (the
  rejected answer is never sent back, since it may quote the candidate outside its block); a second one gives an
  invalid verdict (``malformed``);
- 429 (its ``Retry-After`` pauses the endpoint for every judge sharing it), 5xx, timeouts and connection errors
  are retried by the runtime with backoff, then give an invalid verdict (``rate_limited`` / ``outage`` /
  ``timeout``); any other failure (4xx, a body that is not JSON or too large) gives an invalid verdict at once.

An invalid verdict abstains: it is never 0, and nothing a server or a judged model does raises. Every HTTP call is
recorded in :attr:`JudgeVerdict.calls` (request without the API key, bounded response, status, tokens, latency).
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from proofgym.core import (
    Claim,
    ErrorKind,
    Outcome,
    Verdict,
    bounded_json,
    excerpt,
    redact_url,
    usage_counts,
)
from proofgym.http import (
    MAX_RETRY_AFTER_S,
    NO_RETRIES,
    ChatAttempt,
    ChatClient,
    chat_completions_url,
)
from proofgym.judges._limiter import EndpointLimits, RateLimiter, limiter_for
from proofgym.judges._parse import ParsedVerdicts, ParseProblem, parse_verdicts
from proofgym.judges._prompt import PROMPT_VERSION, build_messages, verdict_schema
from proofgym.judges._rubric import Criterion, Rubric
from proofgym.judges._types import CriterionVerdict, JudgeItem, JudgeVerdict
from proofgym.runtime import RuntimeConfig, VerificationRuntime

Structured = Literal["auto", "json_schema", "text"]
STRUCTURED_MODES: tuple[str, ...] = ("auto", "json_schema", "text")

#: A recorded response (and a rejected answer shown back to the model) is cut to this many characters.
MAX_RECORDED_CHARS = 16_000
# Request keys the judge owns; extra_body may set any other (seed, top_p, chat_template_kwargs...).
_RESERVED_KEYS = frozenset({"model", "messages", "response_format", "stream", "n"})
# Added to a problem when the answer was cut off.
_CUT_OFF = " (the answer was cut off at max_tokens: keep reasons short)"
# A 400 / 422 whose message says one of these refuses the response_format.
_FORMAT_WORDS = ("response_format", "json_schema", "schema", "unsupported", "not supported", "guided", "structured")


def default_runtime_config(timeout_s: float, max_concurrency: int | None = None) -> RuntimeConfig:
    """The runtime a judge gets by default: one item per call, 2 retries with backoff, and a timeout covering the
    HTTP calls one item may make (a structured-output fallback, the malformed retry) and a ``Retry-After``."""
    return RuntimeConfig(max_concurrency=max_concurrency or 32, batch_size=1, retries=2,
                         timeout_s=4 * timeout_s + MAX_RETRY_AFTER_S + 30.0, backoff_base_s=1.0, backoff_max_s=20.0,
                         breaker_failure_threshold=20)


class _Counters:
    """The judge's counters, written from the runtime's loop thread and read from anywhere."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, int] = {}
        self._invalid: dict[str, int] = {}

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._values[name] = self._values.get(name, 0) + amount

    def invalid(self, kind: str) -> None:
        with self._lock:
            self._invalid[kind] = self._invalid.get(kind, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {**self._values, "invalid_by_kind": dict(sorted(self._invalid.items()))}


@dataclass(frozen=True, slots=True)
class _Reply:
    """One logical request's end: the message content, or why there is none (``kind``)."""

    content: str | None = None
    kind: ErrorKind | None = None
    error: str = ""
    cut_off: bool = False


@dataclass(frozen=True, slots=True)
class Question:
    """What one claim asks the model, and how its answer is read: ``parse`` gives the verdict's evidence or a
    problem; ``retry_note`` is what is added to the question to ask again after a problem (the problem holds fixed
    words and the rubric's ids only, so the note holds nothing of the candidate)."""

    messages: list[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    parse: Callable[[str | Mapping[str, Any]], dict[str, Any] | ParseProblem]
    retry_note: Callable[[str], str]


class _ChatEndpoint:
    """The judge's side of the chat client: one POST at a time through the endpoint's limiter, recorded, classified,
    never raising. Its client makes one attempt per call: the judge's retries are its runtime's (a claim asked
    again whole, cached and deduplicated), under the same reading of what is transient."""

    def __init__(self, url: str, model: str, *, api_key: str | None, temperature: float, max_tokens: int,
                 timeout_s: float, structured: Structured, limiter: RateLimiter, transport: Any,
                 extra_body: Mapping[str, Any], counters: _Counters) -> None:
        self.url = url
        self.model = model
        self.params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, **extra_body}
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.structured = structured
        self.text_only = structured == "text"  # auto: set for good when the server refuses response_format
        self.limiter = limiter
        self._counters = counters
        self._chat = ChatClient(url, api_key=api_key, timeout_s=timeout_s, retry=NO_RETRIES, transport=transport)

    async def ask(self, messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any],
                  calls: list[dict[str, Any]]) -> _Reply:
        """The model's reply to ``messages``, with the structured-output fallback; each POST appended to ``calls``."""
        response_format = None if self.text_only else {
            "type": "json_schema", "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
        reply, status = await self._post(messages, response_format, calls)
        if (response_format is not None and self.structured == "auto" and status in (400, 422)
                and any(word in reply.error.lower() for word in _FORMAT_WORDS)):
            if not self.text_only:
                self.text_only = True
                self._counters.add("structured_fallbacks")
            reply, _ = await self._post(messages, None, calls)
        return reply

    async def _post(self, messages: list[dict[str, str]], response_format: dict[str, Any] | None,
                    calls: list[dict[str, Any]]) -> tuple[_Reply, int | None]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        request: dict[str, Any] = {"model": self.model, "messages": messages, "params": dict(self.params)}
        if response_format is not None:
            body["response_format"] = request["response_format"] = response_format
        estimate = sum(len(m.get("content") or "") for m in messages) / 4 + self.max_tokens
        status: int | None = None
        usage: tuple[int | None, int | None] = (None, None)
        self._counters.add("calls")
        async with self.limiter.reserve(estimate) as reservation:
            started = time.perf_counter()
            try:
                attempt = await self._chat.send(body)
            except Exception as exc:  # noqa: BLE001 - whatever the client raises is an invalid verdict, not a crash
                reply = _Reply(kind=ErrorKind.CRASH, error=_describe(exc))
            else:
                status = attempt.status
                reply = _classify(attempt)
                usage = usage_counts(attempt.payload)
                if None not in usage:
                    reservation.settle(usage[0] + usage[1])  # type: ignore[operator]
                if status == 429 and attempt.retry_after_s is not None:
                    self.limiter.pause(min(attempt.retry_after_s, MAX_RETRY_AFTER_S))
        latency = time.perf_counter() - started
        for name, count in zip(("prompt_tokens", "completion_tokens"), usage, strict=True):
            self._counters.add(name, count or 0)
        calls.append({
            "request": request,
            "response": _bounded(reply.content) if reply.kind is None else reply.error,
            "error": None if reply.kind is None else reply.error,
            "status": status,
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "latency_s": latency,
            "attempt": len(calls) + 1,
        })
        return reply, status

    def close(self) -> None:
        """Close the HTTP client on the loop that made it (called before that loop stops)."""
        self._chat.close()


def _classify(attempt: ChatAttempt) -> _Reply:
    """An attempt as a reply: its message content, or the kind of failure."""
    if attempt.error is not None:
        assert attempt.kind is not None
        return _Reply(kind=attempt.kind, error=attempt.error)
    payload = attempt.payload
    assert payload is not None
    choices = payload.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        return _Reply(kind=ErrorKind.MALFORMED, error="the response has no choices[0].message")
    content = _content_text(message.get("content"))
    cut_off = choice.get("finish_reason") == "length"  # type: ignore[union-attr]
    if not content.strip():
        refusal = message.get("refusal")
        why = f"the model refused: {excerpt(refusal)}" if isinstance(refusal, str) and refusal else \
            "the answer is empty"
        return _Reply(content="", kind=ErrorKind.MALFORMED, error=why, cut_off=cut_off)
    return _Reply(content=content, cut_off=cut_off)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
    return ""


class _JudgeVerifier:
    """The :class:`~proofgym.verifiers.Verifier` the runtime runs: one claim is one question to the model.

    A usable answer is a ``certified`` verdict whose evidence holds the verdicts and the calls; a failure an
    ``invalid`` verdict of its kind (transient kinds are retried by the runtime). The calls of every attempt, the
    runtime's retries included, are kept per claim until the judge collects them.
    """

    max_batch_size = 1

    def __init__(self, name: str, version: str, endpoint: _ChatEndpoint,
                 question: Callable[[Mapping[str, Any]], Question], counters: _Counters) -> None:
        self.name = name
        self.version = version
        self._endpoint = endpoint
        self._question = question
        self._counters = counters
        self._calls: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        return list(await asyncio.gather(*(self._verify(claim) for claim in claims)))

    def collect_calls(self, key: str) -> list[dict[str, Any]]:
        """The calls recorded for the claim of ``key`` so far, forgotten here."""
        with self._lock:
            return self._calls.pop(key, [])

    async def _verify(self, claim: Claim) -> Verdict:
        key = claim.key()
        with self._lock:
            calls = self._calls.setdefault(key, [])
        try:
            return await self._ask(claim, calls)
        except Exception as exc:  # noqa: BLE001 - a bug here abstains, it never crashes a run
            return _failed(ErrorKind.CRASH, f"the judge failed: {_describe(exc)}", calls)

    async def _ask(self, claim: Claim, calls: list[dict[str, Any]]) -> Verdict:
        question = self._question(claim.payload)
        messages = question.messages
        problem = ""
        for round_ in range(2):
            reply = await self._endpoint.ask(messages, question.schema_name, question.schema, calls)
            if reply.kind is not None and reply.kind is not ErrorKind.MALFORMED:
                return _failed(reply.kind, reply.error, calls)
            if reply.kind is None:
                assert reply.content is not None
                result = question.parse(_decoded(reply.content))
                if not isinstance(result, ParseProblem):
                    return Verdict(Outcome.CERTIFIED, evidence={**result, "calls": _json(calls)})
                problem = shown = result.message  # fixed words and the rubric's ids only
            else:
                # The reply's own error may quote the model (a refusal): the judge is told only that it was unusable.
                problem, shown = reply.error, "the reply held no answer (it was empty, a refusal or too large)"
            if reply.cut_off:
                problem += _CUT_OFF
                shown += _CUT_OFF
            if round_ == 0:
                self._counters.add("malformed_retries")
                messages = _repaired(question.messages, question.retry_note(shown))
        return _failed(ErrorKind.MALFORMED, f"unusable answer (after one retry): {problem}", calls)


def _repaired(messages: list[dict[str, str]], note: str) -> list[dict[str, str]]:
    """The question asked again with ``note`` after its last message. The rejected answer is never sent back: it may
    quote the candidate, which must stand only inside its delimited block. The note joins the last (user) message,
    since chat templates that want roles to alternate refuse two user turns in a row."""
    *head, last = messages
    return [*head, {**last, "content": f"{last['content']}\n\n{note}"}]


def _decoded(content: str) -> str | Mapping[str, Any]:
    """A structured answer's JSON object, else the text itself (read as a text answer)."""
    stripped = content.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return content
        if isinstance(value, dict):
            return value
    return content


def _failed(kind: ErrorKind, reason: str, calls: list[dict[str, Any]]) -> Verdict:
    return Verdict(Outcome.INVALID, error_kind=kind, reason=reason[:2000], evidence={"calls": _json(calls)})


def _json(value: Any) -> Any:
    return bounded_json(json.loads(json.dumps(value, default=str)))


class ChatJudgeBase:
    """What the LLM judges share: the endpoint, its limiter, the runtime, the counters, closing.

    A subclass says what one claim asks (:meth:`_question`), how items become claims (:meth:`_plan`) and how the
    claims' verdicts become the items' (:meth:`_finish`).
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, name: str | None = None,
                 max_criteria: int = 8, structured: Structured = "auto", temperature: float = 0.0,
                 max_tokens: int = 1024, timeout_s: float = 60.0, runtime: RuntimeConfig | None = None,
                 limits: EndpointLimits | None = None, transport: Any = None,
                 extra_body: Mapping[str, Any] | None = None, limiter: RateLimiter | None = None,
                 default_name: str) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if not isinstance(max_criteria, int) or isinstance(max_criteria, bool) or max_criteria < 1:
            raise ValueError(f"max_criteria must be a positive integer, got {max_criteria!r}")
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}, got {structured!r}")
        _check_number("temperature", temperature, low=0.0, high=2.0)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        _check_number("timeout_s", timeout_s, low=0.0, low_open=True)
        extra = dict(extra_body or {})
        reserved = sorted(_RESERVED_KEYS.intersection(extra))
        if reserved:
            raise ValueError(f"extra_body may not set {', '.join(reserved)} (the judge sets them)")
        self.url = chat_completions_url(base_url, name="base_url")
        self.model = model
        self.name = name or default_name
        self.max_criteria = max_criteria
        self._counters = _Counters()
        self._limiter = limiter if limiter is not None else limiter_for(self.url, limits)
        self._endpoint = _ChatEndpoint(self.url, model, api_key=api_key, temperature=temperature,
                                       max_tokens=max_tokens, timeout_s=timeout_s, structured=structured,
                                       limiter=self._limiter, transport=transport, extra_body=extra,
                                       counters=self._counters)
        self._verifier = _JudgeVerifier(self.name, PROMPT_VERSION, self._endpoint, self._question, self._counters)
        config = runtime or default_runtime_config(timeout_s, self._limiter.limits.max_concurrency)
        self._runtime = VerificationRuntime(self._verifier, config)
        self._closed = False

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    @property
    def runtime(self) -> VerificationRuntime:
        return self._runtime

    def _params(self) -> dict[str, Any]:
        """What of the request enters the cache key besides the question."""
        return {"model": self.model, "prompt_version": PROMPT_VERSION, "params": dict(self._endpoint.params)}

    # -- to be provided ---------------------------------------------------------------------------------------------

    def _question(self, payload: Mapping[str, Any]) -> Question:
        raise NotImplementedError

    def _plan(self, items: Sequence[JudgeItem]) -> tuple[list[Claim], Any]:
        raise NotImplementedError

    def _finish(self, items: Sequence[JudgeItem], plan: Any, results: list[ClaimResult]) -> list[JudgeVerdict]:
        raise NotImplementedError

    # -- judging ----------------------------------------------------------------------------------------------------

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        """One verdict per item, in order; never raises for anything the endpoint or a judged model does."""
        items = list(items)
        if not items:
            return []
        claims, plan = self._plan(items)
        cached = self._cached(claims)
        verdicts = await self._runtime.verify_many(claims)
        return self._done(items, plan, claims, verdicts, cached)

    def judge_sync(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        """Blocking :meth:`judge`, callable from any thread (one running an event loop included)."""
        items = list(items)
        if not items:
            return []
        claims, plan = self._plan(items)
        cached = self._cached(claims)
        verdicts = self._runtime.verify_many_sync(claims)
        return self._done(items, plan, claims, verdicts, cached)

    def _cached(self, claims: list[Claim]) -> list[bool]:
        return [self._runtime.cache_lookup(claim) is not None for claim in claims]

    def _done(self, items: list[JudgeItem], plan: Any, claims: list[Claim], verdicts: list[Verdict],
              cached: list[bool]) -> list[JudgeVerdict]:
        collected: dict[str, list[dict[str, Any]]] = {}
        results = []
        for claim, verdict, hit in zip(claims, verdicts, cached):
            key = claim.key()
            if key not in collected:
                collected[key] = self._verifier.collect_calls(key)
            calls = verdict.evidence.get("calls")
            results.append(ClaimResult(verdict, tuple(calls if isinstance(calls, list) else collected[key]), hit))
        self._counters.add("cache_hits", sum(cached))
        out = self._finish(items, plan, results)
        for judged in out:
            self._counters.add("items")
            if judged.error_kind is not None:
                self._counters.invalid(judged.error_kind)
        return out

    def metrics(self) -> dict[str, Any]:
        """What the judge did: ``items`` judged, HTTP ``calls``, ``retries`` (malformed retries and the runtime's
        retries), ``malformed`` and ``invalid`` items (``invalid_by_kind``), ``cache_hits`` (questions answered
        from the cache), ``prompt_tokens`` / ``completion_tokens``, ``structured_fallbacks``, and the runtime's and
        limiter's own numbers."""
        counts = self._counters.snapshot()
        runtime = self._runtime.metrics()
        by_kind = counts.pop("invalid_by_kind")
        data = {name: counts.get(name, 0) for name in ("items", "calls", "malformed_retries", "cache_hits",
                                                       "prompt_tokens", "completion_tokens", "structured_fallbacks")}
        data.update(retries=data["malformed_retries"] + runtime.retries, malformed=by_kind.get("malformed", 0),
                    invalid=sum(by_kind.values()), invalid_by_kind=by_kind,
                    structured=not self._endpoint.text_only, runtime=runtime.to_dict(), limiter=self._limiter.stats())
        return data

    def close(self) -> None:
        """Stop the runtime and close the HTTP client; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._endpoint.close()
        self._runtime.close()

    def __enter__(self) -> ChatJudgeBase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> ChatJudgeBase:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, url={redact_url(self.url)!r})"


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """One claim's outcome as a judge reads it."""

    verdict: Verdict
    calls: tuple[Mapping[str, Any], ...]
    cached: bool


def chunked(criteria: Sequence[Criterion], size: int) -> list[tuple[Criterion, ...]]:
    """``criteria`` in consecutive chunks of at most ``size``."""
    return [tuple(criteria[i:i + size]) for i in range(0, len(criteria), size)]


def criteria_data(criteria: Sequence[Criterion]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json", exclude_none=True) for c in criteria]


def criteria_from(payload: Mapping[str, Any]) -> tuple[Criterion, ...]:
    return tuple(Criterion.model_validate(c) for c in payload["criteria"])


def question_rubric(payload: Mapping[str, Any], criteria: tuple[Criterion, ...]) -> Rubric:
    """A rubric carrying what a prompt reads of it (the goal), rebuilt from a claim's payload."""
    return Rubric(goal_text=payload["goal"], criteria=criteria)


class LLMJudge(ChatJudgeBase):
    """Judges each item's rubric criteria with a model behind an OpenAI-compatible endpoint (see the module
    docstring). ``base_url`` is ``http://host:port/v1`` or the full ``.../v1/chat/completions`` URL; ``max_criteria``
    criteria are asked per call (more are asked in chunks, their verdicts merged in rubric order). ``runtime``
    overrides :func:`default_runtime_config`; ``limits`` are the endpoint's (shared by every judge of that URL, see
    :func:`~proofgym.judges._limiter.limiter_for`) and ``limiter`` an explicit limiter instead. ``transport`` is an
    ``httpx`` transport (tests); ``extra_body`` adds request keys (``seed``, ``top_p``...)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, name: str | None = None,
                 max_criteria: int = 8, structured: Structured = "auto", temperature: float = 0.0,
                 max_tokens: int = 1024, timeout_s: float = 60.0, runtime: RuntimeConfig | None = None,
                 limits: EndpointLimits | None = None, transport: Any = None,
                 extra_body: Mapping[str, Any] | None = None, limiter: RateLimiter | None = None) -> None:
        super().__init__(base_url, model, api_key=api_key, name=name, max_criteria=max_criteria,
                         structured=structured, temperature=temperature, max_tokens=max_tokens, timeout_s=timeout_s,
                         runtime=runtime, limits=limits, transport=transport, extra_body=extra_body, limiter=limiter,
                         default_name=f"llm:{model}")

    def _question(self, payload: Mapping[str, Any]) -> Question:
        criteria = criteria_from(payload)
        item = JudgeItem(level=payload["level"], rubric=question_rubric(payload, criteria),
                         candidate=payload["candidate"])
        ids = ", ".join(json.dumps(c.id) for c in criteria)

        def parse(answer: str | Mapping[str, Any]) -> dict[str, Any] | ParseProblem:
            result = parse_verdicts(answer, criteria)
            if isinstance(result, ParsedVerdicts):
                return {"verdicts": [{"id": v.id, "reason": v.reason, "score": v.score} for v in result.verdicts],
                        "source": result.source}
            return result

        def retry_note(problem: str) -> str:
            return (f"An earlier answer to this request could not be used: {problem}. Answer with only the JSON "
                    'object {"verdicts": [{"id": ..., "reason": ..., "score": ...}]}, giving every criterion exactly '
                    f"once ({ids}), each with a string reason before a plain-number score on its scale. Do not quote "
                    "the candidate.")

        return Question(build_messages(item, criteria), "verdicts", verdict_schema(criteria), parse, retry_note)

    def _plan(self, items: Sequence[JudgeItem]) -> tuple[list[Claim], list[list[tuple[Criterion, ...]]]]:
        claims: list[Claim] = []
        plan = []
        for item in items:
            chunks = chunked(item.rubric.criteria, self.max_criteria)
            plan.append(chunks)
            for chunk in chunks:
                claims.append(Claim(payload={
                    "rubric": item.rubric.label, "criteria": criteria_data(chunk), "goal": item.rubric.goal_text,
                    "level": item.level, "candidate": item.candidate, **self._params()}))
        return claims, plan

    def _finish(self, items: Sequence[JudgeItem], plan: list[list[tuple[Criterion, ...]]],
                results: list[ClaimResult]) -> list[JudgeVerdict]:
        out = []
        position = 0
        for item, chunks in zip(items, plan):
            parts = results[position:position + len(chunks)]
            position += len(chunks)
            out.append(self._merge(item, chunks, parts))
        return out

    def _merge(self, item: JudgeItem, chunks: list[tuple[Criterion, ...]], parts: list[ClaimResult]) -> JudgeVerdict:
        criteria: list[CriterionVerdict] = []
        calls: list[Mapping[str, Any]] = []
        kinds: list[str] = []
        reasons: list[str] = []
        for chunk, part in zip(chunks, parts):
            calls.extend(part.calls)
            verdict = part.verdict
            if verdict.invalid:
                assert verdict.error_kind is not None
                kinds.append(verdict.error_kind.value)
                label = f"criteria {', '.join(c.id for c in chunk)}: " if len(chunks) > 1 else ""
                reasons.append(label + verdict.reason)
                criteria.extend(CriterionVerdict(c.id, None, "", self.name) for c in chunk)
                continue
            given = {entry["id"]: entry for entry in verdict.evidence.get("verdicts", ())}
            for c in chunk:
                entry = given.get(c.id)
                score = entry.get("score") if entry else None
                on_scale = score is not None and c.scale.problem(score) is None
                criteria.append(CriterionVerdict(c.id, float(score) if on_scale else None,  # type: ignore[arg-type]
                                                 str(entry.get("reason") or "") if entry else "", self.name))
        if not kinds and not all(c.valid for c in criteria):  # a cache entry without a criterion: never 0
            kinds.append(ErrorKind.MALFORMED.value)
            reasons.append("a stored verdict lacks a criterion")
        return JudgeVerdict(judge=self.name, criteria=tuple(criteria), error_kind=kinds[0] if kinds else None,
                            reason="; ".join(reasons), calls=tuple(calls), cached=all(p.cached for p in parts),
                            meta={"model": self.model, "prompt_version": PROMPT_VERSION, "chunks": len(chunks)})


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _bounded(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_RECORDED_CHARS:
        return text
    return text[:MAX_RECORDED_CHARS] + f"\n[... {len(text) - MAX_RECORDED_CHARS} characters not recorded ...]"


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                  low_open: bool = False) -> None:
    ok = _finite(value) and (low is None or (value > low if low_open else value >= low)) \
        and (high is None or value <= high)
    if not ok:
        bounds = " ".join(part for part in (
            "" if low is None else (f"> {low:g}" if low_open else f">= {low:g}"),
            "" if high is None else f"and <= {high:g}") if part)
        raise ValueError(f"{name} must be a finite number {bounds}, got {value!r}")
