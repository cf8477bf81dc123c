"""The verifier protocol: async and batch-first."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from proofgym.core import Claim, Verdict


@runtime_checkable
class Verifier(Protocol):
    """Checks claims and returns one verdict per claim, in order.

    ``name`` and ``version`` enter the verification cache key: change ``version`` whenever the
    same claim could verify differently (new rules, new tool versions).

    A verifier knows nothing about how it is scheduled: the :class:`~proofgym.runtime.VerificationRuntime`
    batches, de-duplicates, caches, times out and retries around it. ``verify_many`` may raise; the
    runtime turns exceptions into ``INVALID`` verdicts (``TransientVerifierError`` and ``TimeoutError``
    are retried, anything else is a crash). Optional attributes the runtime reads when present:

    - ``max_batch_size: int`` -- the largest batch one call accepts (default: unlimited);
    - ``uses_decision: bool`` -- whether the claim's decision affects the verdict (default ``True``);
      when ``False`` claims that differ only in their decision share one verification.
    """

    name: str
    version: str

    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]: ...


class TransientVerifierError(Exception):
    """A failure worth retrying (network blip, 429, 5xx). Raise it from ``verify_many``."""
