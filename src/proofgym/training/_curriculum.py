"""Which training prompts to draw next: more of the rule branches, and of the rows, the policy still gets wrong."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any


# How a row waiting to be replayed is weighted by ``p``, the share of its last group's samples that were wrong.
REPLAY_WEIGHTINGS: dict[str, Callable[[float], float]] = {
    # rows whose samples disagree (p = 1/2) most, a row every sample got wrong barely (it gives no spread)
    "disagreement": lambda p: 0.05 + 4 * p * (1 - p),
    # the more wrong, the more often: with an explore temperature a row every sample got wrong is sampled
    # hotter, where a right answer appears and carries the gradient
    "error": lambda p: 0.05 + p,
}


class BranchCurriculum:
    """Draws dataset rows: a share replayed from rows recently answered wrong, the rest by branch.

    Branch draws keep each gold decision's share of the rows and favour the hard branches within it.
    Rows are grouped by gold decision, then by their ``key`` column (default ``branch``; rows without
    it share ``"all"``). A decision keeps its share, so the curriculum never tilts the policy towards
    one answer (a branch-uniform draw would: four deny branches against one permit branch). Within a
    decision with ``B`` branches, branch ``b`` is drawn with probability
    ``mix / B + (1 - mix) * error_b / sum(error)``, where ``error_b`` is one minus a running
    (exponentially weighted) share of correct samples on ``b``, floored at ``min_error`` so that a
    learned branch is still revisited. Every branch starts at chance (error 0.5).

    Replay: a row whose last group of samples was partly wrong joins a pool; a ``replay`` share of
    the draws comes from it, weighted by ``p * (1 - p)`` (``p`` its last error rate, plus a floor):
    the rows whose samples disagree teach the most, and a rare case (an income of exactly the
    threshold) comes back until the policy gets it right every time, when it leaves the pool.
    """

    def __init__(self, rows: Sequence[Mapping[str, Any]], *, seed: int, key: str = "branch", mix: float = 0.5,
                 decay: float = 0.9, min_error: float = 0.02, replay: float = 0.0,
                 replay_weighting: str = "disagreement") -> None:
        if not rows:
            raise ValueError("the curriculum needs at least one training row")
        if not 0.0 <= mix <= 1.0 or not 0.0 <= decay < 1.0 or not 0.0 < min_error <= 1.0 or not 0.0 <= replay < 1.0:
            raise ValueError(f"need 0 <= mix <= 1, 0 <= decay < 1, 0 < min_error <= 1 and 0 <= replay < 1, got "
                             f"mix={mix}, decay={decay}, min_error={min_error}, replay={replay}")
        if replay_weighting not in REPLAY_WEIGHTINGS:
            raise ValueError(f"replay_weighting must be one of {sorted(REPLAY_WEIGHTINGS)}, got {replay_weighting!r}")
        self.key = key
        self._replay_weight = REPLAY_WEIGHTINGS[replay_weighting]
        self._rows: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
        for row in rows:
            decision = str(row.get("gold", "")).strip().casefold()
            self._rows.setdefault(decision, {}).setdefault(self.branch_of(row), []).append(row)
        total = len(rows)
        self._share = {d: sum(map(len, branches.values())) / total for d, branches in self._rows.items()}
        self.branches = sorted({b for branches in self._rows.values() for b in branches})
        self.accuracy = dict.fromkeys(self.branches, 0.5)
        self.mix, self.decay, self.min_error, self.replay = mix, decay, min_error, replay
        # Rows are identified by object identity: the pool holds the caller's row objects.
        self._known = {id(row) for row in rows}
        self._pool: dict[int, tuple[Mapping[str, Any], float]] = {}
        self._rng = random.Random(seed)

    def branch_of(self, row: Mapping[str, Any]) -> str:
        """The branch ``row`` is counted under."""
        return str(row.get(self.key, "all"))

    @property
    def replay_pool_size(self) -> int:
        """How many rows wait to be replayed."""
        return len(self._pool)

    def last_error(self, row: Mapping[str, Any]) -> float | None:
        """The share of wrong samples in ``row``'s last group while it waits to be replayed (None: not in the
        pool, i.e. never seen, or last answered right every time)."""
        entry = self._pool.get(id(row))
        return None if entry is None else entry[1]

    def weights(self) -> dict[str, float]:
        """The probability of drawing each branch in a branch draw (summed over decisions)."""
        return {b: sum(w for (_, branch), w in self._cells().items() if branch == b) for b in self.branches}

    def sample(self, k: int) -> list[Mapping[str, Any]]:
        """``k`` rows: each replayed with probability ``replay`` (when the pool has rows), else a
        (decision, branch) cell drawn by its weight and a row of it uniformly."""
        cells = self._cells()
        keys = list(cells)
        pool = list(self._pool.values())
        drawn = []
        for _ in range(k):
            if pool and self._rng.random() < self.replay:
                drawn.append(self._rng.choices([row for row, _ in pool],
                                               weights=[self._replay_weight(p) for _, p in pool])[0])
            else:
                decision, branch = self._rng.choices(keys, weights=[cells[key] for key in keys])[0]
                drawn.append(self._rng.choice(self._rows[decision][branch]))
        return drawn

    def update(self, results: Mapping[str, tuple[int, int]]) -> None:
        """Fold in ``{branch: (correct samples, samples)}`` from one step."""
        for branch, (correct, n) in results.items():
            if n and branch in self.accuracy:
                self.accuracy[branch] = self.decay * self.accuracy[branch] + (1 - self.decay) * correct / n

    def observe(self, groups: Iterable[tuple[Mapping[str, Any], int, int]]) -> None:
        """Record ``(row, correct samples, samples)`` for each group of a step: a row with a wrong sample
        joins (or stays in) the replay pool, a row answered right every time leaves it."""
        for row, correct, n in groups:
            if not n or id(row) not in self._known:
                continue
            if correct < n:
                self._pool[id(row)] = (row, 1.0 - correct / n)
            else:
                self._pool.pop(id(row), None)

    def _cells(self) -> dict[tuple[str, str], float]:
        cells = {}
        for decision, branches in sorted(self._rows.items()):
            errors = {b: max(self.min_error, 1.0 - self.accuracy[b]) for b in sorted(branches)}
            total = sum(errors.values())
            for b, error in errors.items():
                within = self.mix / len(errors) + (1.0 - self.mix) * error / total
                cells[(decision, b)] = self._share[decision] * within
        return cells
