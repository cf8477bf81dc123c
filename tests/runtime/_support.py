"""Shared helpers for the runtime tests (module-level, so worker processes can unpickle them)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any, Sequence

from proofgym.core import Claim, ErrorKind, Verdict
from proofgym.testing import FakeVerifier, Fault, certified, invalid_verdict, refuted


def make_claims(n: int, *, start: int = 0, reasoning: str = "because") -> list[Claim]:
    """``n`` distinct claims; claim ``i`` carries ``payload={"i": i}``."""
    return [Claim(decision=f"d{i % 5}", payload={"i": i}, reasoning=f"{reasoning} {i}")
            for i in range(start, start + n)]


def decide(claim: Claim) -> Verdict:
    """The healthy verdict of a claim: deterministic in its index (every third is refuted)."""
    i = claim.payload["i"]
    return refuted(f"claim {i} refuted") if i % 3 == 0 else certified(claim.decision)


def fault_from_payload(claim: Claim) -> Fault | None:
    """The fault named in ``claim.payload["fault"]``, if any."""
    name = claim.payload.get("fault")
    return None if name is None else Fault(name)


# How many verifiers this process has unpickled (a worker process counts its own).
_unpickled = 0
_warmed_up = 0


def decide_in_worker(claim: Claim) -> Verdict:
    """Certify, recording which process did the work; exit that process abruptly for claims marked "die"."""
    if claim.payload.get("die"):
        os._exit(3)
    return certified(claim.decision, evidence={"pid": os.getpid(), "unpickled": _unpickled})


class CountingFakeVerifier(FakeVerifier):
    """A FakeVerifier that counts, per process, how often it was unpickled."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        global _unpickled
        _unpickled += 1
        self.__dict__.update(state)


class SlowWarmUpVerifier(FakeVerifier):
    """A FakeVerifier whose ``warm_up`` (the imports a real verifier's checks need) takes longer than a call's
    timeout; its verdicts say whether their process was warmed up, and how many times."""

    def __init__(self, warm_up_s: float) -> None:
        super().__init__(decide=self._decide)
        self.warm_up_s = warm_up_s

    def warm_up(self) -> None:
        global _warmed_up
        time.sleep(self.warm_up_s)
        _warmed_up += 1

    @staticmethod
    def _decide(claim: Claim) -> Verdict:
        return certified(claim.decision, evidence={"pid": os.getpid(), "warmed_up": _warmed_up})


class FlakyVerifier:
    """Fails its first calls as scripted, then answers every claim with ``certified(decision)``.

    ``failures[n]`` is what call ``n`` does: an exception to raise, a list of per-claim verdicts to
    return (``None`` items mean the healthy verdict), or ``None`` for a healthy answer.
    """

    name = "flaky"
    version = "1"

    def __init__(self, failures: Sequence[Any]) -> None:
        self.failures = list(failures)
        self.calls: list[list[Claim]] = []

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        n = len(self.calls)
        self.calls.append(list(claims))
        script = self.failures[n] if n < len(self.failures) else None
        if isinstance(script, BaseException):
            raise script
        if script is None:
            script = [None] * len(claims)
        return [certified(c.decision) if v is None else v for c, v in zip(claims, script)]


class InFlightVerifier:
    """Sleeps ``latency_s`` per call and records the most calls it ever had in flight at once."""

    name = "in-flight"
    version = "1"

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.in_flight = 0
        self.max_in_flight = 0
        self.threads: set[str] = set()

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]:
        self.threads.add(threading.current_thread().name)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        return [certified(c.decision) for c in claims]


def outage() -> Verdict:
    """A transient INVALID answer."""
    return invalid_verdict(ErrorKind.OUTAGE, "backend unavailable")
