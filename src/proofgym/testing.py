"""Testing support: a scripted verifier with injectable faults, and verdict builders."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Any, Callable, Mapping, Sequence

from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict
from proofgym.verifiers import TransientVerifierError


def certified(decision: str | None = None, **fields: Any) -> Verdict:
    """A certified verdict for ``decision``; extra keyword arguments set other ``Verdict`` fields."""
    return Verdict(Outcome.CERTIFIED, decision=decision, **fields)


def refuted(reason: str = "refuted", *, rejected: Mapping[str, Any] | None = None, **fields: Any) -> Verdict:
    """A refuted verdict; ``rejected`` maps fact names to the values the verifier refused."""
    facts = tuple(RejectedFact(name, value, ("rejected",)) for name, value in (rejected or {}).items())
    return Verdict(Outcome.REFUTED, reason=reason, rejected_facts=facts, **fields)


def invalid_verdict(error_kind: ErrorKind = ErrorKind.OUTAGE, reason: str = "backend unavailable") -> Verdict:
    """An invalid verdict (the verifier could not decide)."""
    return Verdict(Outcome.INVALID, error_kind=error_kind, reason=reason)


class Fault(StrEnum):
    """Faults :class:`FakeVerifier` can inject into a call that carries a given claim."""

    TIMEOUT = "timeout"  # sleeps far past any sane timeout, then answers
    HANG = "hang"  # never answers
    EXCEPTION = "exception"  # raises a non-transient error (a crash)
    TRANSIENT = "transient"  # raises TransientVerifierError (worth a retry)
    GARBAGE = "garbage"  # answers with something that is not a verdict
    WRONG_LENGTH = "wrong_length"  # answers with the wrong number of verdicts
    INVALID = "invalid"  # answers with an INVALID verdict (outage) for that claim


def _echo(claim: Claim) -> Verdict:
    return certified(claim.decision)


def _no_fault(claim: Claim) -> Fault | None:
    return None


class FakeVerifier:
    """A verifier whose answers, latency and faults are scripted.

    ``decide(claim)`` gives the verdict for a healthy claim (default: certify the claim's own
    decision). ``fault(claim)`` returns a :class:`Fault` to inject into any call carrying that claim,
    or ``None``. ``latency_s`` is slept once per call, whatever the batch size, like a remote batch
    endpoint. Every call's claims are recorded in ``calls``.
    """

    def __init__(
        self,
        decide: Callable[[Claim], Verdict] = _echo,
        *,
        fault: Callable[[Claim], Fault | None] | None = None,
        latency_s: float = 0.0,
        max_batch_size: int | None = None,
        uses_decision: bool = True,
        name: str = "fake",
        version: str = "1",
        timeout_sleep_s: float = 3600.0,
    ) -> None:
        self.name = name
        self.version = version
        self.max_batch_size = max_batch_size
        self.uses_decision = uses_decision
        self._decide = decide
        # A module-level default (not a lambda) keeps the verifier picklable for process executors.
        self._fault = fault or _no_fault
        self._latency_s = latency_s
        self._timeout_sleep_s = timeout_sleep_s
        self.calls: list[list[Claim]] = []

    @property
    def claims_verified(self) -> int:
        return sum(len(batch) for batch in self.calls)

    async def verify_many(self, claims: Sequence[Claim]) -> list[Any]:
        self.calls.append(list(claims))
        faults = {f for f in (self._fault(c) for c in claims) if f is not None}
        if self._latency_s:
            await asyncio.sleep(self._latency_s)
        if Fault.HANG in faults:
            await asyncio.Event().wait()
        if Fault.TIMEOUT in faults:
            await asyncio.sleep(self._timeout_sleep_s)
        if Fault.EXCEPTION in faults:
            raise RuntimeError("injected crash")
        if Fault.TRANSIENT in faults:
            raise TransientVerifierError("injected transient failure")
        if Fault.WRONG_LENGTH in faults:
            return [self._decide(c) for c in claims] + [certified("extra")]
        out: list[Any] = []
        for claim in claims:
            f = self._fault(claim)
            if f is Fault.GARBAGE:
                out.append({"proof_checked": True, "decision": claim.decision})
            elif f is Fault.INVALID:
                out.append(invalid_verdict())
            else:
                out.append(self._decide(claim))
        return out
