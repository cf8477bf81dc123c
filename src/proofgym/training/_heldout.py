"""Held-out evaluation: greedy answers on rows the policy never trained on, scored by the reward function."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HeldoutReport:
    """Greedy decoding on ``n`` held-out rows.

    ``accuracy``: share whose claimed decision equals the row's gold decision (``strip().casefold()``);
    ``per_branch``: ``{branch: (correct, n)}`` (rows without a ``branch`` under ``"all"``);
    ``certified_share``: share the verifier certified and the shaper credited (the claimed decision,
    proved from facts that match the record); ``format_ok_share``: share that parsed;
    ``mean_reward``: mean of the non-``None`` rewards (``None`` when every item abstained).
    """

    n: int
    accuracy: float
    per_branch: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    certified_share: float = 0.0
    format_ok_share: float = 0.0
    mean_reward: float | None = None

    def branch_accuracy(self) -> dict[str, float]:
        """``{branch: accuracy}``."""
        return {b: (c / n if n else 0.0) for b, (c, n) in self.per_branch.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-native dict of every field (``per_branch`` values as ``[correct, n]``)."""
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "per_branch": {b: [c, n] for b, (c, n) in self.per_branch.items()},
            "certified_share": self.certified_share,
            "format_ok_share": self.format_ok_share,
            "mean_reward": self.mean_reward,
        }


def evaluate_heldout(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    reward_fn: Any,
    *,
    batch_size: int = 64,
    max_new_tokens: int = 32,
) -> HeldoutReport:
    """Answer every row greedily with ``model`` and score the answers with ``reward_fn``.

    ``rows`` are dataset rows: ``prompt`` (text or chat messages) and ``gold`` required,
    ``source_facts`` and ``branch`` optional. ``reward_fn`` is a
    :class:`~proofgym.rewards.RewardFunction` (its ``score`` method gives each item's outcome and
    breakdown). Raises ``ValueError`` naming the first malformed row.
    """
    from proofgym.training._generate import generate

    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    rows = list(rows)
    if not rows:
        raise ValueError("evaluate_heldout needs at least one row")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"held-out row {i} must be a mapping, got {type(row).__name__}")
        if "prompt" not in row:
            raise ValueError(f"held-out row {i} has no 'prompt'")
        gold = row.get("gold")
        if not isinstance(gold, str) or not gold.strip():
            raise ValueError(f"held-out row {i} needs a non-blank string 'gold' decision, got {gold!r}")
    correct = certified = format_ok = 0
    rewards: list[float] = []
    per_branch: dict[str, list[int]] = {}
    for start in range(0, len(rows), batch_size):
        chunk = rows[start:start + batch_size]
        prompts = [row["prompt"] for row in chunk]
        texts = generate(model, tokenizer, prompts, greedy=True, max_new_tokens=max_new_tokens).texts
        for row, item in zip(chunk, reward_fn.score(prompts, texts, chunk)):
            claimed = item.claim.decision if item.claim is not None else None
            right = isinstance(claimed, str) and claimed.strip().casefold() == row["gold"].strip().casefold()
            correct += right
            certified += item.components.get("certified", 0.0) == 1.0
            format_ok += item.outcome != "format_error"
            if item.reward is not None:
                rewards.append(item.reward)
            entry = per_branch.setdefault(str(row.get("branch", "all")), [0, 0])
            entry[0] += right
            entry[1] += 1
    n = len(rows)
    return HeldoutReport(
        n=n,
        accuracy=correct / n,
        per_branch={b: (c, m) for b, (c, m) in sorted(per_branch.items())},
        certified_share=certified / n,
        format_ok_share=format_ok / n,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
    )
