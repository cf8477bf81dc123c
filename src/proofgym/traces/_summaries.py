"""One line per session or run, as listings show them (the full record is ``TraceStore.get_session``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

RUN_STATUSES: tuple[str, ...] = ("running", "ok", "error", "timeout", "cancelled")


@dataclass(frozen=True)
class SessionSummary:
    """A session's scalar columns: ids, status, timing, size and reward."""

    session_id: str
    run_id: str
    env_name: str
    seed: int | None
    policy_id: str | None
    correlation_id: str | None
    status: str
    error: str | None
    started_at: float
    ended_at: float | None
    n_steps: int
    total_reward: float
    outcome_score: float | None
    outcome: str | None = None
    task_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunSummary:
    """A run (one eval, training or rollout job) and the count and mean reward of its sessions."""

    run_id: str
    kind: str
    env_name: str | None
    status: str
    started_at: float
    ended_at: float | None
    config: Mapping[str, Any]
    summary: Mapping[str, Any] | None
    n_sessions: int
    mean_reward: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
