"""What a trainer adapter or the reward server reports about a scored batch: a flat per-item breakdown and batch
metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proofgym.rewards._function import ScoredItem

# The shaper's components, in a fixed order: every per-item breakdown carries all of them, since
# veRL and OpenRLHF collect each key into one array per batch and need the same keys on every item.
COMPONENTS = ("format", "certified", "correct", "grounded", "graded", "rejected")
OUTCOMES = ("certified", "refuted", "invalid", "format_error")
# Runtime counters reported per batch (RuntimeMetrics field names).
_RUNTIME_COUNTERS = ("claims", "dedup_saves", "cache_hits_memory", "cache_hits_persistent", "verifier_calls",
                     "retries", "timeouts")


def item_breakdown(item: ScoredItem, score: float) -> dict[str, Any]:
    """One item as flat scalars: ``score`` (the number the trainer uses), ``reward`` (the shaped
    reward, ``None`` when it abstained), ``outcome``, ``decision``, ``certified_decision``,
    ``valid`` (0.0 for an invalid verification), ``abstained`` and every shaper component (0.0
    where it was not computed: a format error or an invalid verification)."""
    components = item.components
    return {
        "score": float(score),
        "reward": item.reward,
        "outcome": item.outcome,
        "decision": (item.claim.decision if item.claim is not None else None) or "",
        "certified_decision": (item.verdict.decision if item.verdict is not None else None) or "",
        "valid": float(item.outcome != "invalid"),
        "abstained": float(item.reward is None),
        **{name: float(components.get(name, 0.0)) for name in COMPONENTS},
    }


def batch_metrics(items: Sequence[ScoredItem], runtime_metrics: Any = None, *, prefix: str = "proofgym/"
                  ) -> dict[str, float]:
    """Scalar metrics of one scored batch, named ``{prefix}...``.

    ``certified_share`` / ``correct_share`` / ``format_ok_share``: share of *all* completions with
    that component at 1 (a format error or an invalid verification counts as 0); ``invalid_share``:
    invalid verifications over completions that reached the verifier (the error budget's ratio);
    ``outcome/<o>``: share of completions per outcome; ``component/<c>``: mean of each component over
    the completions the verifier judged (certified or refuted), absent when there were none;
    ``reward_mean``: mean over the completions that have a reward. ``runtime/<counter>`` and
    ``runtime/verify_wall_s`` come from ``runtime_metrics`` (a ``RuntimeMetrics`` of this batch).
    """
    n = len(items)
    if n == 0:
        return {}
    counts = {outcome: 0 for outcome in OUTCOMES}
    for item in items:
        counts[item.outcome] = counts.get(item.outcome, 0) + 1
    judged = [item for item in items if item.outcome in ("certified", "refuted")]
    verified = n - counts["format_error"]
    rewards = [item.reward for item in items if item.reward is not None]
    metrics = {
        f"{prefix}certified_share": sum(item.components.get("certified", 0.0) == 1.0 for item in items) / n,
        f"{prefix}correct_share": sum(item.components.get("correct", 0.0) == 1.0 for item in items) / n,
        f"{prefix}format_ok_share": verified / n,
        f"{prefix}invalid_share": counts["invalid"] / verified if verified else 0.0,
        f"{prefix}abstained_share": sum(item.reward is None for item in items) / n,
    }
    if rewards:
        metrics[f"{prefix}reward_mean"] = sum(rewards) / len(rewards)
    for outcome, count in counts.items():
        metrics[f"{prefix}outcome/{outcome}"] = count / n
    if judged:
        for name in COMPONENTS:
            metrics[f"{prefix}component/{name}"] = sum(item.components.get(name, 0.0) for item in judged) / len(judged)
    if runtime_metrics is not None:
        for name in _RUNTIME_COUNTERS:
            value = getattr(runtime_metrics, name, None)
            if isinstance(value, (int, float)):
                metrics[f"{prefix}runtime/{name}"] = float(value)
        wall = getattr(runtime_metrics, "verify_wall_s", None)
        if isinstance(wall, (int, float)):
            metrics[f"{prefix}runtime/verify_wall_s"] = float(wall)
    return metrics


def last_runtime_metrics(reward_fn: Any) -> Any:
    """The runtime's metrics of its most recent batch, or ``None`` when the runtime does not keep them."""
    getter = getattr(getattr(reward_fn, "runtime", None), "last_batch_metrics", None)
    if getter is None:
        return None
    try:
        return getter()
    except Exception:  # metrics are best-effort: they must never take a training step down
        return None
