"""Turn a verdict, the claim it judged and the reference into a bounded reward."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, cast

from proofgym.core import Claim, Outcome, Verdict
from proofgym.rewards._config import ShaperConfig
from proofgym.rewards._grounding import rejected_fact_names
from proofgym.rewards._reference import Reference

_OutcomeName = Literal["certified", "refuted", "invalid", "format_error"]


@dataclass(frozen=True, slots=True)
class ShapedReward:
    """A reward with its breakdown.

    ``reward`` is ``None`` when the shaper abstains (an invalid verdict: no training signal).
    ``outcome`` is the verdict's outcome, or ``"format_error"`` when the completion did not parse.

    For certified and refuted verdicts, ``components`` holds each raw component value in [0, 1]
    (``format``, ``certified``, ``correct``, ``grounded``, ``graded`` and the ``rejected`` fact
    fraction) and ``contributions`` its weighted share of the reward (``weight * value``, and
    ``-penalty * fraction`` for ``rejected``), so the reward is the sum of the contributions,
    clamped into the shaper's bounds. A format error or an invalid verdict has a fixed reward and
    both mappings empty. ``rejected_facts`` names the rejected facts, ``reason`` explains the reward.
    """

    reward: float | None
    outcome: _OutcomeName
    components: dict[str, float] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    rejected_facts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-native dict of every field."""
        return {
            "reward": self.reward,
            "outcome": self.outcome,
            "components": dict(self.components),
            "contributions": dict(self.contributions),
            "reason": self.reason,
            "rejected_facts": list(self.rejected_facts),
        }


class InvalidVerdictError(Exception):
    """Raised by :meth:`DefaultRewardShaper.shape` on an invalid verdict under ``on_invalid="raise"``."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"cannot shape an invalid verdict ({verdict.error_kind}): {verdict.reason}")
        self.verdict = verdict


class DefaultRewardShaper:
    """Scores a verdict on a claim.

    reward = sum of ``weights[k] * component[k]`` - ``penalties.rejected * rejected fraction``,
    clamped into :attr:`bounds`. Only the verdict's outcome, decision, rejected facts and graded
    component, the claim's decision and facts, and the reference enter it: never the claim's
    reasoning, nor anything else a completion can write. Guarantees, for every valid config:

    1. the reward is ``None`` only for an invalid verdict under ``on_invalid="abstain"``, otherwise
       finite and inside :attr:`bounds`;
    2. a certified, fully grounded, correct completion outscores every completion that is not;
    3. a format failure scores exactly the floor, and nothing parsed scores below it;
    4. an invalid verdict (outage, timeout, open breaker...) never pays: ``None`` by default.
    """

    def __init__(self, config: ShaperConfig | None = None) -> None:
        self.config = config if config is not None else ShaperConfig()
        w = self.config.weights
        self._weights = {
            "format": w.format,
            "certified": w.certified,
            "correct": w.correct,
            "grounded": w.grounded,
            "graded": w.graded,
        }
        self._ceiling = sum(self._weights.values())

    @property
    def bounds(self) -> tuple[float, float]:
        """``(floor, ceiling)``: every reward lies inside; the ceiling is the sum of the weights."""
        return (self.config.floor, self._ceiling)

    def format_failure(self, reason: str) -> ShapedReward:
        """The reward of a completion that could not be parsed: exactly the floor."""
        return ShapedReward(reward=self.config.floor, outcome="format_error", reason=reason)

    def shape(
        self, verdict: Verdict, claim: Claim, reference: Reference | Mapping[str, Any] | None = None
    ) -> ShapedReward:
        """Score ``verdict`` on ``claim`` against ``reference``.

        ``reference`` is a :class:`Reference` or anything :meth:`Reference.from_value` accepts (a
        dataset row). Raises :class:`InvalidVerdictError` on an invalid verdict under
        ``on_invalid="raise"``.
        """
        if verdict.outcome is Outcome.INVALID:
            return self._invalid(verdict)
        ref = Reference.from_value(reference)
        rejected = rejected_fact_names(verdict, claim, ref.source_facts)
        # A certificate (or partial credit) over facts that are not the record's certifies nothing
        # about the record: paying it would make inventing facts beat an honest mistake.
        certified = not rejected and verdict.outcome is Outcome.CERTIFIED and (
            verdict.decision is None or _same_decision(verdict.decision, claim.decision)
        )
        correct = certified if ref.gold is None else _same_decision(claim.decision, ref.gold)
        graded = 0.0 if rejected else self._graded(verdict, claim)
        components = {
            "format": 1.0,
            "certified": float(certified),
            "correct": float(correct),
            "grounded": float(not rejected),
            "graded": graded,
            # A verifier may reject required facts the claim never asserted, so cap the fraction.
            "rejected": min(1.0, len(rejected) / max(1, len(claim.facts))),
        }
        contributions = {name: weight * components[name] for name, weight in self._weights.items()}
        # 0.0 - x rather than -x, so that no penalty shows as 0.0 and not -0.0.
        contributions["rejected"] = 0.0 - self.config.penalties.rejected * components["rejected"]
        floor, ceiling = self.bounds
        reward = min(ceiling, max(floor, sum(contributions.values())))
        return ShapedReward(
            reward=reward,
            # An Outcome's value is one of its three names, all in _OutcomeName.
            outcome=cast(_OutcomeName, verdict.outcome.value),
            components=components,
            contributions=contributions,
            reason=_reason(verdict, claim, ref, certified, correct, rejected),
            rejected_facts=rejected,
        )

    def _graded(self, verdict: Verdict, claim: Claim) -> float:
        if self.config.graded_from == "rule_mentions":
            return rule_mention_credit(verdict.evidence, claim.reasoning)
        return _unit(verdict.components.get(self.config.graded_component, 0.0))

    def _invalid(self, verdict: Verdict) -> ShapedReward:
        on_invalid = self.config.on_invalid
        if on_invalid == "raise":
            raise InvalidVerdictError(verdict)
        reward = self.config.floor if on_invalid == "floor" else None
        action = "scored at the floor" if on_invalid == "floor" else "abstained"
        reason = f"invalid verdict ({verdict.error_kind}): {verdict.reason}; {action}"
        return ShapedReward(reward=reward, outcome="invalid", reason=reason)


def rule_mention_credit(evidence: Mapping[str, Any], reasoning: str | None) -> float:
    """Credit in [0, 1] for reasoning that names the rules that fired: (named fired rules - named rules
    that did not fire) / rules fired, floored at 0. Rule ``debt_to_income`` counts as named by
    "debt_to_income" or "debt to income" (whole words, any case)."""
    trace = evidence.get("symbolic_trace") if isinstance(evidence, Mapping) else None
    rules = trace.get("rules") if isinstance(trace, Mapping) else None
    if not reasoning or not isinstance(rules, list):
        return 0.0
    text = " ".join(reasoning.casefold().replace("_", " ").split())
    fired = named_fired = named_idle = 0
    for rule in rules:
        if not isinstance(rule, Mapping) or not isinstance(rule.get("rule_name"), str):
            continue
        words = " ".join(rule["rule_name"].casefold().replace("_", " ").split())
        named = bool(words) and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None
        if rule.get("fired") is True:
            fired += 1
            named_fired += named
        else:
            named_idle += named
    return max(0.0, (named_fired - named_idle) / fired) if fired else 0.0


def _normalise(decision: Any) -> str | None:
    return decision.strip().casefold() if isinstance(decision, str) else None


def _same_decision(a: Any, b: Any) -> bool:
    # Two missing decisions are not "the same answer".
    na = _normalise(a)
    return na is not None and na == _normalise(b)


def _unit(value: Any) -> float:
    """A verifier component as a number in [0, 1]; anything that is not a finite number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    if isinstance(value, float) and not math.isfinite(value):
        return 0.0
    # Clamp before converting: an int too large for a float must not overflow.
    return float(min(1, max(0, value)))


def _reason(
    verdict: Verdict, claim: Claim, ref: Reference, certified: bool, correct: bool, rejected: tuple[str, ...]
) -> str:
    if verdict.outcome is Outcome.REFUTED:
        parts = [f"refuted: {verdict.reason}" if verdict.reason else "refuted"]
    elif certified:
        parts = ["certified"]
    elif rejected and verdict.decision is not None and _same_decision(verdict.decision, claim.decision):
        parts = ["certified only on rejected facts, so not credited"]
    else:
        parts = [f"certified another decision ({verdict.decision!r}, claimed {claim.decision!r})"]
    if ref.gold is not None:
        # The gold answer itself stays out of the reason: reasons may be logged or shown to models.
        parts.append("decision matches the reference" if correct else "decision does not match the reference")
    if rejected:
        parts.append("rejected facts: " + ", ".join(map(str, rejected)))
    return "; ".join(parts)
