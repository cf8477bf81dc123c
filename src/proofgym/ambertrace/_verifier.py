"""The AmberTrace backend: certify claims on a hosted, verified AmberTrace platform.

The platform derives the decision from the claim's facts and proves it; this verifier sends the facts
(never the claimed decision) through the ``ambertraceai`` SDK and maps each answer onto a
:class:`~proofgym.core.Verdict` whose evidence has the embedded kernel's report shape
(``docs/rulebooks.md``, "The report") plus ``"backend": "ambertrace"``.

How answers are classified. INVALID verdicts are never cached (the runtime refuses to); transient
kinds (OUTAGE, RATE_LIMITED, TIMEOUT) are retried by the runtime with backoff and count towards its
circuit breaker; CRASH and MALFORMED are not retried.

========================================================  =========  ============  =========  =======
platform answer / SDK error                               outcome    error kind    retried    cached
========================================================  =========  ============  =========  =======
200, ``proof_checked: true``, a decision                  CERTIFIED  -             no         yes
200, ``proof_checked`` true or false, status abstain      REFUTED    -             no         yes
or indeterminate (or no decision on an older server)
200, a decision with ``proof_checked: false``             INVALID    CRASH         no         no
200, ``proof_checked`` absent or null (not verified)      INVALID    MALFORMED     no         no
200, status ``unavailable``                               INVALID    OUTAGE        yes        no
200 that is not a result object, or has wrong types       INVALID    MALFORMED     no         no
503 carrying fail-closed diagnostics (rejected facts,     REFUTED    -             no         yes
missing atoms, deciding rule, details) or a refusal code
other 503 with the app's envelope (engine unavailable)    INVALID    OUTAGE        yes        no
``backend_unavailable`` (the SDK's own verdict after      INVALID    OUTAGE, or    yes        no
retrying transport errors and proxy 502/503/504)                     TIMEOUT
429, or a ``rate_limit`` code                             INVALID    RATE_LIMITED  yes        no
408, 504, a ``timeout`` code, ``batch_budget_exhausted``  INVALID    TIMEOUT       yes        no
500, 502 and other 5xx                                    INVALID    OUTAGE        yes        no
401, 403, 404 (key, capability, platform id)              INVALID    CRASH         no         no
4xx gate rejection with structured rejected facts         REFUTED    -             no         yes
other 4xx                                                 INVALID    CRASH         no         no
network error / timeout raised by a client                INVALID    OUTAGE /      yes        no
                                                                     TIMEOUT
API key not set, SDK not installed, SDK refuses config    INVALID    CRASH         no         no
batch answer of the wrong shape or length                 INVALID    MALFORMED     no         no
========================================================  =========  ============  =========  =======

Why these rules:

- The SDK raises HTTP 503 both for a fail-closed refusal (a real answer about the claim) and, as
  ``backend_unavailable``, for an outage it could not ride out. It retries only responses *without*
  the app's JSON envelope, so an envelope 503 is an app answer; but the app also answers 503 when its
  verified engine cannot run. A 503 is therefore a denial only when it names why the claim cannot be
  certified (the fail-closed diagnostics, or a code such as ``not_certified``); without that it is an
  outage. ``stalled_stage`` alone is not evidence: an engine that could not run stalls somewhere too.
  Erring this way abstains on a real denial (no signal, never cached, and the reward function's error
  budget says so); erring the other way would cache an outage as a deny and train on it.
- A 200 whose ``proof_checked`` is absent or null is not a verification at all (a non-verified
  platform answers like that, and a verified one never does). Refuting it would score, and cache,
  every completion as wrong because of a configuration problem, so it is MALFORMED and logged once.
  An abstain or indeterminate status is the platform's answer that these facts certify no decision:
  REFUTED, as with the embedded kernel. A decision whose proof did not check is a backend bug (the
  embedded kernel makes a rejected proof INVALID too): CRASH, neither paid nor punished.
- A missing key or SDK is a configuration problem: retrying cannot fix it, and it must not raise
  into the reward path. It is CRASH (not transient, so never retried; INVALID, so never cached), with
  one ERROR log line; the runtime's breaker then stops calling until its reset time.
- Whole-batch failures that no claim can cause (outage, rate limit, timeout, bad key) come back as one
  INVALID verdict per claim with the precise kind, so the runtime retries them and counts the breaker
  without bisecting a batch against a dead backend. Whole-batch failures a claim could cause (an app
  500, a 4xx refusing the request) are raised, so the runtime bisects the batch and isolates that
  claim. The batch endpoint reports denials per item, so a batch-level error is never a denial.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import math
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict, invalid
from proofgym.verifiers import TransientVerifierError, VerifierKind

_LOG = logging.getLogger("proofgym.verifiers.ambertrace")

DEFAULT_QUERY = "Decide from the given facts."
# What the report needs; the platform always adds its anchors (platform_id, query). The narrative
# ``answer`` is left out: nothing is scored on it.
_PROJECTION = ("decision", "status", "proof_checked", "proof_summary", "explanation")
# Enters the verifier version (so the cache key): bump it when answers map to verdicts differently.
_MAPPING_VERSION = "1"
_STATUSES = frozenset({"decided", "abstain", "indeterminate", "unavailable"})
# Error codes that name a certification refusal even without diagnostics.
_DENIAL_CODES = frozenset({
    "fail_closed", "not_certified", "uncertified", "certification_failed", "verification_failed",
    "proof_check_failed", "indeterminate", "fact_rejected", "facts_rejected",
})
_CONFIG_STATUSES = frozenset({401, 403, 404})
_CONFIG_CODES = frozenset({"unauthorized", "invalid_api_key", "forbidden", "capability_disabled", "not_found"})
_MAX_REASON_CHARS = 400


class AmberTraceVerifier:
    """Certifies claims on AmberTrace platform ``platform_id`` (async, batch-first).

    Each claim's facts are sent with ``query`` (default :data:`DEFAULT_QUERY`) and ``explain=True``;
    the claimed decision is never sent, so claims that differ only in their decision share one
    verification (``uses_decision = False``). Batches go to ``platforms.query_batch`` (at most
    ``max_batch_size`` queries per call) when ``use_batch`` and the client has it, else one
    ``platforms.query`` per claim, concurrently. ``projection`` asks the platform for the report's
    fields only. The SDK is synchronous: every call runs in a worker thread, never on the event loop.

    ``client`` is an object with the SDK's ``platforms.query`` / ``platforms.query_batch``
    interface (tests inject one). Without it an ``ambertraceai.AmbertraceAPI`` is built on first use
    from the API key in the environment variable ``api_key_env`` (the key is never taken from
    anywhere else), ``base_url`` or ``$AMBERTRACE_BASE_URL`` or the SDK's default endpoint, and
    ``request_timeout_s`` (the SDK's per-request timeout; keep it, times the SDK's own retries, below
    the runtime's ``timeout_s``: a call the runtime abandons still finishes in its thread). A missing
    key or SDK never raises: every claim gets an INVALID verdict saying what to fix.

    The platform's rules live on the server: when the platform is rebuilt with other rules, change
    ``platform_version`` (any label; it enters the version, so the cache key), or verdicts of the
    old rules are reused from a persistent cache.
    """

    uses_decision = False

    def __init__(
        self,
        platform_id: int,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key_env: str = "AMBERTRACE_API_KEY",
        query: str | None = None,
        use_batch: bool = True,
        projection: bool = True,
        max_batch_size: int = 50,
        request_timeout_s: float | None = None,
        platform_version: str | None = None,
    ) -> None:
        if isinstance(platform_id, bool) or not isinstance(platform_id, int):
            raise TypeError(f"platform_id must be an int, got {platform_id!r}")
        if isinstance(max_batch_size, bool) or not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise ValueError(f"max_batch_size must be a positive int, got {max_batch_size!r}")
        self.platform_id = platform_id
        self.api_key_env = api_key_env
        self.query = query or DEFAULT_QUERY
        self.use_batch = use_batch
        self.projection = projection
        self.max_batch_size = max_batch_size
        self.request_timeout_s = request_timeout_s
        # Resolved once: the endpoint is part of the version, and the client must use the same one.
        self.base_url = base_url or os.environ.get("AMBERTRACE_BASE_URL") or None
        self.name = f"ambertrace:{platform_id}"
        query_hash = hashlib.sha256(self.query.encode("utf-8")).hexdigest()[:12]
        self.version = (f"map{_MAPPING_VERSION}/platform{platform_id}/sdk-{_sdk_version()}/"
                        f"{(self.base_url or 'default').rstrip('/')}/query-{query_hash}"
                        + (f"/rules-{platform_version}" if platform_version else ""))
        self._client = client
        self._client_lock = threading.Lock()
        self._logged: set[str] = set()

    def __repr__(self) -> str:
        return f"AmberTraceVerifier(platform_id={self.platform_id}, version={self.version!r})"

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        claims = list(claims)
        if not claims:
            return []
        try:
            api = self._client if self._client is not None else await asyncio.to_thread(self._connect)
        except _NotConfigured as exc:
            reason = f"AmberTrace verifier not configured: {exc}"
            self._log_once(reason, logging.ERROR, reason)
            return [invalid(ErrorKind.CRASH, reason) for _ in claims]
        platforms = api.platforms
        if self.use_batch and callable(getattr(platforms, "query_batch", None)):
            size = self.max_batch_size
            answers = await asyncio.gather(
                *(self._verify_batch(platforms, claims[i : i + size]) for i in range(0, len(claims), size))
            )
            return [verdict for answer in answers for verdict in answer]
        return list(await asyncio.gather(*(self._verify_one(platforms, claim) for claim in claims)))

    # -- the client ----------------------------------------------------------------------------------

    def _connect(self) -> Any:
        # In a worker thread: building the SDK client pings the platform awake.
        with self._client_lock:
            if self._client is None:
                self._client = self._build_client()
            return self._client

    def _build_client(self) -> Any:
        api_key = os.environ.get(self.api_key_env)
        if not api_key:
            raise _NotConfigured(f"the environment variable {self.api_key_env} (the AmberTrace API key) is not set")
        try:
            import ambertraceai
        except ImportError:
            raise _NotConfigured("the ambertraceai SDK is not installed (pip install 'proofgym[ambertrace]')") from None
        options: dict[str, Any] = {"api_key": api_key, "base_url": self.base_url}
        if self.request_timeout_s is not None:
            options["timeout"] = self.request_timeout_s
        try:
            return ambertraceai.AmbertraceAPI(**options)
        except ValueError as exc:  # the SDK's own checks, e.g. a base_url on the wrong host
            raise _NotConfigured(f"the ambertraceai SDK refused its configuration: {exc}") from None

    # -- one claim per call --------------------------------------------------------------------------

    async def _verify_one(self, platforms: Any, claim: Claim) -> Verdict:
        options: dict[str, Any] = {"query": self.query, "facts": _json_native(claim.facts), "explain": True}
        if self.projection:
            options["projection"] = list(_PROJECTION)
        try:
            result = await asyncio.to_thread(platforms.query, self.platform_id, **options)
        except Exception as exc:
            error = _PlatformError.from_exception(exc)
            if error is not None:
                return self._platform_error(error)
            kind = _network_kind(exc)
            if kind is None:
                return invalid(ErrorKind.CRASH, self._redact(f"the AmberTrace client raised {_describe(exc)}"))
            return invalid(kind, self._redact(f"AmberTrace unreachable: {_describe(exc)}"))
        return self._answer(result)

    # -- a batch per call ----------------------------------------------------------------------------

    async def _verify_batch(self, platforms: Any, claims: list[Claim]) -> list[Verdict]:
        queries = [{"query": self.query, "facts": _json_native(claim.facts), "explain": True} for claim in claims]
        options: dict[str, Any] = {"projection": list(_PROJECTION)} if self.projection else {}
        try:
            response = await asyncio.to_thread(platforms.query_batch, self.platform_id, queries=queries, **options)
        except Exception as exc:
            return self._batch_failure(exc, len(claims))
        items = _batch_items(response, len(claims))
        if isinstance(items, str):
            self._log_once("malformed-batch", logging.WARNING, f"{self.name}: malformed batch answer: {items}")
            return [invalid(ErrorKind.MALFORMED, items) for _ in claims]
        return [self._batch_item(item) for item in items]

    def _batch_failure(self, exc: Exception, count: int) -> list[Verdict]:
        """Verdicts for a batch call that failed as a whole, or raise so the runtime bisects it."""
        error = _PlatformError.from_exception(exc)
        if error is None:
            kind = _network_kind(exc)
            if kind is None:
                raise exc  # a client bug: the runtime records a crash and bisects to the claim that triggers it
            reason = self._redact(f"AmberTrace unreachable: {_describe(exc)}")
        else:
            reason = self._redact(error.describe())
            kind = error.kind()
            if kind is None:  # denials come per item; a whole-batch 503 is the app being unavailable
                kind = ErrorKind.OUTAGE if error.status == 503 else ErrorKind.CRASH
            if kind is ErrorKind.CRASH and error.configuration:
                self._log_once(reason, logging.ERROR, f"{self.name}: {reason}")
            elif kind is ErrorKind.CRASH:
                self._log_once("batch-refused", logging.WARNING,
                               f"{self.name}: the platform refused a batch of {count} queries ({reason}); the runtime "
                               "bisects it; lower runtime.batch_size if the batch is too large for the platform")
                raise AmberTraceRequestRefused(reason) from None
            elif kind is ErrorKind.OUTAGE and error.app_server_error:
                raise TransientVerifierError(reason) from None
        return [invalid(kind, reason) for _ in range(count)]

    def _batch_item(self, item: Mapping[str, Any]) -> Verdict:
        status = item.get("status")
        if status == "ok":
            return self._answer(item.get("data"))
        if status == "error" and isinstance(item.get("error"), Mapping):
            return self._platform_error(_PlatformError.from_item(item["error"]))
        return self._malformed("batch-item", f"batch item {item.get('index')} has status {status!r} "
                                             "without the matching data or error object")

    # -- classification ------------------------------------------------------------------------------

    def _answer(self, result: Any) -> Verdict:
        """The verdict of a 200 answer."""
        if not isinstance(result, Mapping):
            return self._malformed("not-a-result", f"the platform answered with {type(result).__name__}, "
                                                   "expected a query result object")
        explanation = _mapping(result.get("explanation"))
        proof_checked = _field(result, explanation, "proof_checked")
        decision = _decision(result, explanation)
        status = result.get("status")
        if proof_checked is not None and not isinstance(proof_checked, bool):
            return self._malformed("types", f"proof_checked is {proof_checked!r}, expected a boolean")
        if decision is not None and not (isinstance(decision, str) and decision.strip()):
            return self._malformed("types", f"decision is {decision!r}, expected a non-empty string or null")
        if status is not None and not (isinstance(status, str) and status in _STATUSES):
            return self._malformed("types", f"status is {status!r}, expected one of {sorted(_STATUSES)}")
        if status == "unavailable":
            return invalid(ErrorKind.OUTAGE, "the platform's verified engine was unavailable (status 'unavailable')")
        if proof_checked is None:
            reason = (f"the platform answered without a checked proof (proof_checked absent or null): is platform "
                      f"{self.platform_id} a verified platform?")
            return self._malformed("unverified", reason)
        report = ambertrace_report(result, platform_id=self.platform_id)
        rejected = _rejected_facts(report["rejected_facts"])
        if status in ("abstain", "indeterminate") or (status is None and decision is None):
            if decision is not None:
                return self._malformed("types", f"status {status!r} with decision {decision!r}")
            return Verdict(Outcome.REFUTED, evidence=report, rejected_facts=rejected,
                           reason=f"the platform certified no decision (status {status or 'absent'!r})")
        if decision is None:
            return self._malformed("types", "status 'decided' without a decision")
        if not proof_checked:
            # As with the embedded kernel's checker: a decision whose own proof fails is a backend bug,
            # neither paid nor punished.
            return invalid(ErrorKind.CRASH, f"the platform decided {decision!r} but its proof did not check "
                                            "(proof_checked false)")
        return Verdict(Outcome.CERTIFIED, decision=decision, evidence=report, rejected_facts=rejected,
                       reason=f"platform {self.platform_id} certified {decision!r}")

    def _platform_error(self, error: _PlatformError) -> Verdict:
        """The verdict of one query the platform (or the SDK for it) answered with an error."""
        kind = error.kind()
        reason = self._redact(error.describe())
        if kind is None:
            evidence = _empty_report("abstain" if error.rejected else "indeterminate", self.platform_id)
            evidence["proof_summary"] = f"No decision: {reason}"
            evidence["rejected_facts"] = [fact.to_dict() for fact in error.rejected]
            evidence["certified_fact_summary"]["rejected"] = len(error.rejected)
            evidence["error"] = {**error.to_dict(), "message": self._redact(error.message)}
            return Verdict(Outcome.REFUTED, evidence=evidence, rejected_facts=error.rejected,
                           reason=f"the platform refused to certify a decision: {reason}")
        if kind is ErrorKind.CRASH:
            self._log_once(reason, logging.ERROR, f"{self.name}: {reason}")
        return invalid(kind, reason)

    def _malformed(self, category: str, reason: str) -> Verdict:
        reason = self._redact(reason)
        self._log_once(category, logging.WARNING, f"{self.name}: {reason}")
        return invalid(ErrorKind.MALFORMED, reason)

    # -- helpers -------------------------------------------------------------------------------------

    def _log_once(self, key: str, level: int, message: str) -> None:
        # Loud once, not once per claim: a configuration problem would otherwise flood the log.
        if key not in self._logged:
            self._logged.add(key)
            _LOG.log(level, "%s", message)

    def _redact(self, text: str) -> str:
        key = os.environ.get(self.api_key_env)
        if key and len(key) >= 8:
            text = text.replace(key, "***")
        return text if len(text) <= _MAX_REASON_CHARS else text[: _MAX_REASON_CHARS - 3] + "..."


class AmberTraceRequestRefused(Exception):
    """The platform refused a whole batch request (a 4xx): the runtime bisects the batch to find the
    claim that made it unacceptable."""


class _NotConfigured(Exception):
    """The SDK client cannot be built: missing key, missing SDK, or configuration the SDK refuses."""


@dataclass(frozen=True)
class _PlatformError:
    """An error answer, from an SDK exception or a batch item's error object."""

    status: int | None
    code: str
    message: str
    rejected: tuple[RejectedFact, ...]
    structured_rejection: bool  # rejected facts came as {field, value, reasons}, not bare field names
    details: tuple[Any, ...]
    missing_atoms: tuple[Any, ...]
    deciding_rule: Any
    stalled_stage: Any
    timed_out: bool  # the SDK gave up because requests timed out

    @classmethod
    def from_exception(cls, exc: BaseException) -> _PlatformError | None:
        # Duck-typed (an HTTP status on the exception), so importing the SDK is never needed here.
        status = getattr(exc, "status_code", None)
        if isinstance(status, bool) or not isinstance(status, int):
            return None
        raw_rejected = getattr(exc, "rejected_facts", None)
        return cls(
            status=status,
            code=str(getattr(exc, "code", "") or ""),
            message=str(getattr(exc, "message", "") or exc),
            rejected=_rejected_facts(raw_rejected),
            structured_rejection=_structured(raw_rejected),
            details=tuple(_sequence(getattr(exc, "details", None))),
            missing_atoms=tuple(_sequence(getattr(exc, "missing_atoms", None))),
            deciding_rule=getattr(exc, "deciding_rule", None),
            stalled_stage=getattr(exc, "stalled_stage", None),
            timed_out=_timed_out(exc),
        )

    @classmethod
    def from_item(cls, error: Mapping[str, Any]) -> _PlatformError:
        diagnostics = _mapping(error.get("query_diagnostics"))

        def pick(key: str) -> Any:
            value = error.get(key)
            return value if value is not None else diagnostics.get(key)

        status = error.get("status_code", error.get("status"))
        raw_rejected = pick("rejected_facts")
        return cls(
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
            code=str(error.get("code") or ""),
            message=str(error.get("message") or ""),
            rejected=_rejected_facts(raw_rejected),
            structured_rejection=_structured(raw_rejected),
            details=tuple(_sequence(error.get("details"))),
            missing_atoms=tuple(_sequence(pick("missing_atoms"))),
            deciding_rule=pick("deciding_rule"),
            stalled_stage=pick("stalled_stage"),
            timed_out=False,
        )

    @property
    def configuration(self) -> bool:
        """Whether the error says the verifier is misconfigured (key, capability, platform id)."""
        return self.status in _CONFIG_STATUSES or self.code.lower() in _CONFIG_CODES

    @property
    def app_server_error(self) -> bool:
        """A 5xx the app itself raised (not the fail-closed 503, not a proxy or gateway failure)."""
        return (self.status is not None and self.status >= 500 and self.status not in (502, 503, 504)
                and self.code != "backend_unavailable")

    def kind(self) -> ErrorKind | None:
        """Why the query is INVALID, or ``None`` when the error is a fail-closed denial (REFUTED)."""
        code, status = self.code.lower(), self.status
        if code == "backend_unavailable":
            return ErrorKind.TIMEOUT if self.timed_out else ErrorKind.OUTAGE
        if status == 429 or "rate_limit" in code:
            return ErrorKind.RATE_LIMITED
        if status in (408, 504) or "timeout" in code or code == "batch_budget_exhausted":
            return ErrorKind.TIMEOUT
        if self.configuration:
            return ErrorKind.CRASH
        if code in _DENIAL_CODES or (self.structured_rejection and self.rejected) or self.missing_atoms:
            if status is None or status == 503 or 400 <= status < 500:
                return None
        # A 503 (or a batch item error, which carries no HTTP status) also denies on looser evidence.
        if (status is None or status == 503) and (self.rejected or self.details or self.deciding_rule is not None):
            return None
        if (status is not None and status >= 500) or any(m in code for m in ("unavailable", "internal", "overload")):
            return ErrorKind.OUTAGE
        return ErrorKind.CRASH

    def describe(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else "batch item"
        code = f" {self.code}" if self.code else ""
        return f"{where}{code}: {self.message}" if self.message else f"{where}{code}"

    def to_dict(self) -> dict[str, Any]:
        return cast("dict[str, Any]", _json_native({  # a dict stays a dict
            "status_code": self.status,
            "code": self.code,
            "message": self.message,
            "missing_atoms": list(self.missing_atoms),
            "deciding_rule": self.deciding_rule,
            "stalled_stage": self.stalled_stage,
        }))


# -- the report -------------------------------------------------------------------------------------


def ambertrace_report(result: Mapping[str, Any], *, platform_id: int | None = None) -> dict[str, Any]:
    """The embedded kernel's report (``docs/rulebooks.md``) built from a platform ``QueryResult``.

    Hosted names are mapped (``confidence.neural_confidence`` -> ``confidence.neural``,
    ``explanation.decision.deciding_rules[].rule`` -> ``deciding_rules``, ...). Missing or mistyped
    keys become ``None`` / empty; it never raises and returns JSON-native data only.
    """
    result = _mapping(result)
    explanation = _mapping(result.get("explanation"))
    confidence = _mapping(explanation.get("confidence"))
    trace = _mapping(explanation.get("symbolic_trace"))
    summary = _mapping(explanation.get("certified_fact_summary"))
    proof = _mapping(explanation.get("proof"))
    rules = [_rule(rule) for rule in _sequence(trace.get("rules")) if isinstance(rule, Mapping)]
    rejected = [fact.to_dict() for fact in _rejected_facts(explanation.get("rejected_facts"))]
    certified_facts = _sequence(explanation.get("certified_facts"))
    derived = proof.get("derived")
    decision = _decision(result, explanation)
    proof_checked = _field(result, explanation, "proof_checked")
    status = result.get("status")
    if not isinstance(status, str):
        status = "decided" if proof_checked is True and isinstance(decision, str) else None
    return {
        "backend": "ambertrace",
        "platform_id": platform_id,
        "schema_version": _count(explanation.get("schema_version")),
        "decision": decision if isinstance(decision, str) else None,
        "status": status,
        "proof_checked": proof_checked is True,
        "proof_summary": _text(_field(result, explanation, "proof_summary")),
        "confidence": {
            "overall": _number(confidence.get("overall")),
            "symbolic": _number(confidence.get("symbolic_confidence")),
            "neural": _number(confidence.get("neural_confidence")),
        },
        "certified_fact_summary": {
            "accepted": _count(summary.get("accepted"), len(certified_facts) if certified_facts else None),
            "rejected": _count(summary.get("rejected"), len(rejected)),
            "derived": len(derived) if isinstance(derived, list) else None,
        },
        "rejected_facts": rejected,
        "symbolic_trace": {
            "rules_evaluated": _count(trace.get("rules_evaluated"), len(rules)),
            "rules_fired": _count(trace.get("rules_fired"), sum(rule["fired"] for rule in rules)),
            "rules": rules,
        },
        "proof": _json_native(proof) if proof else None,
        # The platform checks its proofs server-side and reports no checker problems of its own.
        "checker_problems": [],
        "deciding_rules": _deciding_rules(_mapping(explanation.get("decision")).get("deciding_rules")),
    }


def _empty_report(status: str, platform_id: int) -> dict[str, Any]:
    """The report of a query that failed closed: nothing decided, nothing proved."""
    return ambertrace_report({"status": status, "proof_checked": False}, platform_id=platform_id)


def _rule(rule: Mapping[str, Any]) -> dict[str, Any]:
    name = rule.get("rule_name", rule.get("name"))
    rule_id = rule.get("rule_id")
    return {
        "rule_id": rule_id if isinstance(rule_id, (int, str)) and not isinstance(rule_id, bool) else _opt_text(name),
        "rule_name": _opt_text(name),
        "rule_type": _opt_text(rule.get("rule_type")),
        "action_type": _opt_text(rule.get("action_type")),
        "required": rule.get("required") is True,
        "fired": rule.get("fired") is True,
        "explanation": _text(rule.get("explanation")),
    }


def _deciding_rules(raw: Any) -> list[str]:
    names = []
    for entry in _sequence(raw):
        name = entry.get("rule", entry.get("rule_name")) if isinstance(entry, Mapping) else entry
        if isinstance(name, (str, int)) and not isinstance(name, bool):
            names.append(str(name))
    return names


def _rejected_facts(raw: Any) -> tuple[RejectedFact, ...]:
    """``[{field, value, reasons}]`` (or bare field names, from older deployments) as RejectedFacts."""
    facts = []
    for entry in _sequence(raw):
        if isinstance(entry, Mapping) and entry.get("field") is not None:
            reasons = entry.get("reasons")
            reasons = [reasons] if isinstance(reasons, str) else _sequence(reasons)
            facts.append(RejectedFact(str(entry["field"]), _json_native(entry.get("value")),
                                      tuple(str(reason) for reason in reasons)))
        elif isinstance(entry, str):
            facts.append(RejectedFact(entry, None, ()))
    return tuple(facts)


def _structured(raw: Any) -> bool:
    return any(isinstance(entry, Mapping) for entry in _sequence(raw))


def _batch_items(response: Any, count: int) -> list[Mapping[str, Any]] | str:
    """The batch's items in query order, or why the answer cannot be matched to the queries."""
    if not isinstance(response, Mapping) or not isinstance(response.get("results"), list):
        return f"the batch answer has no results list (got {type(response).__name__})"
    results = response["results"]
    if len(results) != count:
        return f"the batch answer has {len(results)} results for {count} queries"
    by_index: dict[int, Mapping[str, Any]] = {}
    for item in results:
        index = item.get("index") if isinstance(item, Mapping) else None
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count:
            by_index[index] = item
    if len(by_index) != count:
        return "the batch answer's item indices do not match its queries one to one"
    return [by_index[i] for i in range(count)]


def _network_kind(exc: BaseException) -> ErrorKind | None:
    """TIMEOUT or OUTAGE for a transport failure a client raised itself, else ``None``."""
    if _timed_out(exc):
        return ErrorKind.TIMEOUT
    httpx = sys.modules.get("httpx")  # if httpx was never imported, no httpx error exists
    if isinstance(exc, OSError) or (httpx is not None and isinstance(exc, httpx.TransportError)):
        return ErrorKind.OUTAGE
    return None


def _timed_out(exc: BaseException) -> bool:
    httpx = sys.modules.get("httpx")
    seen: BaseException | None = exc
    for _ in range(8):  # the cause chain: the SDK wraps the transport error it gave up on
        if seen is None:
            return False
        if isinstance(seen, TimeoutError) or (httpx is not None and isinstance(seen, httpx.TimeoutException)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _sdk_version() -> str:
    try:
        return importlib.metadata.version("ambertraceai")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _field(result: Mapping[str, Any], explanation: Mapping[str, Any], key: str) -> Any:
    # proof_checked / proof_summary are documented both on the result and in its explanation.
    return result[key] if key in result else explanation.get(key)


def _decision(result: Mapping[str, Any], explanation: Mapping[str, Any]) -> Any:
    # On the result, else in the explanation's certified verdict block.
    return result["decision"] if "decision" in result else _mapping(explanation.get("decision")).get("decision")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, (list, tuple)) else ()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any, default: int | None = None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _json_native(value: Any) -> Any:
    """A JSON-native copy (dict, list, str, int, float, bool, None): verdict evidence must serialise."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _json_native(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_native(item) for item in value]
    return repr(value)


# -- run-config kind ``ambertrace`` ----------------------------------------------------------------


class AmberTraceOptions(BaseModel):
    """Run-config options of the ``ambertrace`` verifier kind. The API key is read from the
    environment variable named by ``api_key_env``, never from a config."""

    model_config = ConfigDict(extra="forbid")

    platform_id: int = Field(ge=1, strict=True)
    base_url: str | None = Field(None, min_length=1)
    api_key_env: str = Field("AMBERTRACE_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    query: str | None = Field(None, min_length=1)
    use_batch: bool = True
    projection: bool = True
    request_timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    platform_version: str | None = Field(None, min_length=1, description="label of the platform's rules; "
                                         "change it when the platform is rebuilt so cached verdicts are not reused")

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "api_key" in data:
            raise ValueError("api_key must not be set in a config: put the key in the environment variable named "
                             "by api_key_env (default AMBERTRACE_API_KEY)")
        return data


def build_ambertrace_verifier(options: AmberTraceOptions) -> AmberTraceVerifier:
    return AmberTraceVerifier(
        options.platform_id,
        base_url=options.base_url,
        api_key_env=options.api_key_env,
        query=options.query,
        use_batch=options.use_batch,
        projection=options.projection,
        request_timeout_s=options.request_timeout_s,
        platform_version=options.platform_version,
    )


#: The ``ambertrace`` verifier kind, registered through the ``proofgym.verifiers`` entry point (pyproject.toml).
AMBERTRACE_VERIFIER = VerifierKind(AmberTraceOptions, build_ambertrace_verifier)
