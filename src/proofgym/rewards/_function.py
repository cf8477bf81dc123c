"""The reward function: parser -> verification runtime -> shaper, for a batch of completions."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field

from proofgym.core import Claim, ErrorKind, Verdict, invalid
from proofgym.rewards._reference import Reference
from proofgym.rewards._shaper import DefaultRewardShaper, InvalidVerdictError, ShapedReward

logger = logging.getLogger("proofgym.rewards")


class _Parser(Protocol):
    def parse(self, completion: Any, prompt: Any = None) -> Any: ...


class _Runtime(Protocol):
    async def verify_many(self, claims: Sequence[Claim]) -> list[Verdict]: ...

    def verify_many_sync(self, claims: Sequence[Claim]) -> list[Verdict]: ...

    def close(self) -> None: ...


class ErrorBudgetExceeded(RuntimeError):
    """Raised when a batch has more invalid verifications than the error budget allows (action ``abort``)."""


class ErrorBudget(BaseModel):
    """The share of verified items per batch that may be invalid before proofgym logs an error
    (``warn``) or raises :class:`ErrorBudgetExceeded` (``abort``); a run config's ``error_budget:`` section.
    Keyword arguments only: ``ErrorBudget(max_invalid_share=0.1, action="abort")``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_invalid_share: float = Field(0.2, ge=0.0, le=1.0)
    action: Literal["warn", "abort"] = "warn"


@dataclass(frozen=True)
class ScoredItem:
    """One completion's reward with everything that explains it."""

    index: int
    reward: float | None
    outcome: str
    components: dict[str, float]
    reason: str
    contributions: dict[str, float] = field(default_factory=dict)
    claim: Claim | None = None
    verdict: Verdict | None = None
    format_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "outcome": self.outcome,
            "reward": self.reward,
            "components": dict(self.components),
            "contributions": dict(self.contributions),
            "reason": self.reason,
            "decision": None if self.claim is None else self.claim.decision,
            "certified_decision": None if self.verdict is None else self.verdict.decision,
            "format_error": self.format_error,
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
        }


@dataclass
class RewardStats:
    """Counts since the reward function was created (``batches``, ``items``, outcomes, invalid policy)."""

    batches: int = 0
    items: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    abstained: int = 0
    floored_invalid: int = 0
    budget_breaches: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "batches": self.batches,
            "items": self.items,
            "outcomes": dict(self.outcomes),
            "abstained": self.abstained,
            "floored_invalid": self.floored_invalid,
            "budget_breaches": self.budget_breaches,
        }


@dataclass
class _Batch:
    """One call's parsed state, kept per call so concurrent calls never share it."""

    size: int
    references: list[Reference]
    parsed: list[tuple[int, Claim]] = field(default_factory=list)
    format_errors: dict[int, str] = field(default_factory=dict)
    parser_crashes: dict[int, str] = field(default_factory=dict)


class RewardFunction:
    """``reward_fn(prompts, completions, refs) -> list[float | None]``.

    Safe to call from any thread or event loop (use :meth:`acall` inside async code). Nothing a
    policy writes or a backend returns makes it raise: parse failures score the shaper's floor,
    verifier failures are invalid and abstain (``None``) by default. It raises only on caller
    mistakes (mismatched lengths, malformed references), on ``on_invalid: raise`` and on an
    exceeded error budget with action ``abort``.
    """

    def __init__(
        self,
        parser: _Parser,
        runtime: _Runtime,
        shaper: DefaultRewardShaper | None = None,
        *,
        error_budget: ErrorBudget | None = None,
    ) -> None:
        self.parser = parser
        self.runtime = runtime
        self.shaper = shaper or DefaultRewardShaper()
        self.error_budget = error_budget or ErrorBudget()
        self.stats = RewardStats()
        self.last_batch = RewardStats()
        self._lock = threading.Lock()

    def __call__(self, prompts: Sequence[Any] | None, completions: Sequence[Any], refs: Sequence[Any] | None = None,
                 ) -> list[float | None]:
        return [item.reward for item in self.score(prompts, completions, refs)]

    async def acall(self, prompts: Sequence[Any] | None, completions: Sequence[Any],
                    refs: Sequence[Any] | None = None) -> list[float | None]:
        return [item.reward for item in await self.ascore(prompts, completions, refs)]

    def score(self, prompts: Sequence[Any] | None, completions: Sequence[Any], refs: Sequence[Any] | None = None,
              ) -> list[ScoredItem]:
        """Like calling the function, but returns each item's full breakdown and evidence."""
        batch = self._prepare(prompts, completions, refs)
        claims = [claim for _, claim in batch.parsed]
        try:
            verdicts = self.runtime.verify_many_sync(claims)
        except Exception as exc:  # noqa: BLE001 - one bad item must not cost the batch
            verdicts = self._verify_one_by_one(claims, exc)
        return self._finish(batch, verdicts)

    async def ascore(self, prompts: Sequence[Any] | None, completions: Sequence[Any],
                     refs: Sequence[Any] | None = None) -> list[ScoredItem]:
        batch = self._prepare(prompts, completions, refs)
        claims = [claim for _, claim in batch.parsed]
        try:
            verdicts = await self.runtime.verify_many(claims)
        except Exception as exc:  # noqa: BLE001 - as in score(), the retries off the event loop
            verdicts = await asyncio.to_thread(self._verify_one_by_one, claims, exc)
        return self._finish(batch, verdicts)

    def _verify_one_by_one(self, claims: list[Claim], batch_error: Exception) -> list[Verdict]:
        """After the runtime raised ``batch_error`` for a whole batch: each claim verified on its own, ``invalid``
        (crash) for those that raise again, so the items that did not cause the failure keep their rewards.
        A closed runtime is the caller's mistake: its error is raised."""
        if getattr(self.runtime, "closed", False):
            raise batch_error
        return [self._verify_alone(claim, batch_error) for claim in claims]

    def _verify_alone(self, claim: Claim, batch_error: Exception) -> Verdict:
        try:
            return self.runtime.verify_many_sync([claim])[0]
        except Exception as exc:  # noqa: BLE001 - the runtime's failure on this item is an infrastructure one
            logger.error("verification raised on a claim (the batch raised %s: %s)", type(batch_error).__name__,
                         str(batch_error)[:200], exc_info=True)
            return invalid(ErrorKind.CRASH, f"verification raised: {type(exc).__name__}: {str(exc)[:200]}")

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> RewardFunction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _prepare(self, prompts: Sequence[Any] | None, completions: Sequence[Any],
                 refs: Sequence[Any] | None) -> _Batch:
        n = len(completions)
        if prompts is not None and len(prompts) != n:
            raise ValueError(f"prompts has {len(prompts)} items but completions has {n}")
        if refs is not None and len(refs) != n:
            raise ValueError(f"refs has {len(refs)} items but completions has {n}")
        references = []
        for i in range(n):
            try:
                references.append(Reference.from_value(None if refs is None else refs[i]))
            except ValueError as exc:
                raise ValueError(f"refs[{i}]: {exc}") from None
        batch = _Batch(size=n, references=references)
        for i, completion in enumerate(completions):
            try:
                result = self.parser.parse(completion, None if prompts is None else prompts[i])
            except Exception as exc:  # a parser bug is an infrastructure failure, not the policy's
                logger.exception("parser raised on item %d", i)
                batch.parser_crashes[i] = f"parser crashed: {type(exc).__name__}: {exc}"
                continue
            if result.claim is not None:
                batch.parsed.append((i, result.claim))
            else:
                batch.format_errors[i] = f"{result.error.kind}: {result.error.message}"
        return batch

    def _finish(self, batch: _Batch, verdicts: list[Verdict]) -> list[ScoredItem]:
        by_index = {i: (claim, verdict) for (i, claim), verdict in zip(batch.parsed, verdicts, strict=True)}
        items: list[ScoredItem] = []
        stats = RewardStats(batches=1, items=batch.size)
        for i in range(batch.size):
            if i in batch.format_errors:
                shaped = self.shaper.format_failure(batch.format_errors[i])
                items.append(_item(i, shaped, format_error=batch.format_errors[i]))
            elif i in batch.parser_crashes:
                verdict = invalid(ErrorKind.CRASH, batch.parser_crashes[i])
                items.append(_item(i, self._shape(verdict, Claim(), batch.references[i]), verdict=verdict))
            else:
                claim, verdict = by_index[i]
                shaped = self._shape(verdict, claim, batch.references[i])
                items.append(_item(i, shaped, claim=claim, verdict=verdict))
            item = items[-1]
            stats.outcomes[item.outcome] += 1
            if item.outcome == "invalid":
                if item.reward is None:
                    stats.abstained += 1
                else:
                    stats.floored_invalid += 1
        breach = self._budget_breach(stats, next((item.reason for item in items if item.outcome == "invalid"), None))
        stats.budget_breaches = int(breach is not None)
        with self._lock:
            self.last_batch = stats
            self.stats.batches += 1
            self.stats.items += batch.size
            self.stats.outcomes.update(stats.outcomes)
            self.stats.abstained += stats.abstained
            self.stats.floored_invalid += stats.floored_invalid
            self.stats.budget_breaches += stats.budget_breaches
        if breach is not None:
            logger.error(breach)
            if self.error_budget.action == "abort":
                raise ErrorBudgetExceeded(breach)
        return items

    def _shape(self, verdict: Verdict, claim: Claim, reference: Reference) -> ShapedReward:
        try:
            return self.shaper.shape(verdict, claim, reference)
        except InvalidVerdictError:
            raise
        except Exception as exc:  # a shaper bug must not take the training run down: abstain
            logger.exception("reward shaper raised")
            return ShapedReward(reward=None, outcome="invalid", components={},
                                reason=f"shaper crashed: {type(exc).__name__}: {exc}")

    def _budget_breach(self, batch: RewardStats, first_reason: str | None = None) -> str | None:
        """The error message when the batch's invalid share is over budget (with the first invalid item's reason,
        so the line says what to fix), else ``None``."""
        verified = batch.items - batch.outcomes.get("format_error", 0)
        invalid_items = batch.outcomes.get("invalid", 0)
        if not verified or invalid_items / verified <= self.error_budget.max_invalid_share:
            return None
        why = f"; the first: {first_reason[:300]}" if first_reason else ""
        return (f"error budget exceeded: {invalid_items} of {verified} verifications were invalid "
                f"({invalid_items / verified:.0%} > {self.error_budget.max_invalid_share:.0%}){why}; "
                "check the verifier backend")


def _item(index: int, shaped: ShapedReward, *, claim: Claim | None = None, verdict: Verdict | None = None,
          format_error: str | None = None) -> ScoredItem:
    return ScoredItem(index=index, reward=shaped.reward, outcome=shaped.outcome, components=dict(shaped.components),
                      contributions=dict(shaped.contributions), reason=shaped.reason, claim=claim, verdict=verdict,
                      format_error=format_error)
