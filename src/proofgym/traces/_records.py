"""What a trace holds: one session per rollout, its steps, and the events and rewards of each step.

Plain, JSON-native dataclasses: the rollout loop builds them in memory, the trace store writes a
whole session in one transaction (so a session is either complete or absent), and the read API
gives the same objects back. ``to_dict`` / ``from_dict`` round-trip losslessly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Mapping

SessionStatus = Literal["ok", "error", "timeout", "cancelled"]
EventRewardKind = Literal["shaped", "sparse", "achievement", "penalty", "evaluator", "human"]
SESSION_STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "cancelled")
EVENT_REWARD_KINDS: tuple[str, ...] = ("shaped", "sparse", "achievement", "penalty", "evaluator", "human")


@dataclass
class LMCallEvent:
    """One call to a language model: what was sent, what came back, what it cost."""

    model: str
    request: Any = None
    response: Any = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LMCallEvent:
        return cls(**dict(data))


@dataclass
class EnvEvent:
    """What the environment did with one action: the tool called, its result and reward, whether it ended."""

    tool: str | None
    args: Any = None
    result: Any = None
    reward: float = 0.0
    done: bool = False
    truncated: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EnvEvent:
        return cls(**dict(data))


@dataclass
class VerificationEvent:
    """A verifier's verdict on something the agent produced (``verdict`` is ``Verdict.to_dict()``)."""

    verifier: str
    outcome: str
    verdict: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VerificationEvent:
        return cls(**dict(data))


@dataclass
class EventReward:
    """A reward attached to one step: its value, kind, key (e.g. a reward component) and where it came from."""

    value: float
    kind: str = "shaped"
    key: str | None = None
    source: str = "environment"
    annotation: Any = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EventReward:
        return cls(**dict(data))


@dataclass
class OutcomeReward:
    """The reward of a whole session: ``total`` return, number of ``steps``, and the outcome ``score``."""

    total: float
    steps: int
    score: float | None = None
    kind: str = "sparse"
    source: str = "environment"
    annotation: Any = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutcomeReward:
        return cls(**dict(data))


@dataclass
class StepTrace:
    """One turn: the observation the agent acted on, its action, and what followed."""

    index: int
    observation: Any = None
    action: Any = None
    reward: float = 0.0
    done: bool = False
    truncated: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)
    lm_calls: list[LMCallEvent] = field(default_factory=list)
    env_event: EnvEvent | None = None
    verification: VerificationEvent | None = None
    event_rewards: list[EventReward] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepTrace:
        data = dict(data)
        data["lm_calls"] = [LMCallEvent.from_dict(e) for e in data.get("lm_calls") or ()]
        data["event_rewards"] = [EventReward.from_dict(e) for e in data.get("event_rewards") or ()]
        if data.get("env_event") is not None:
            data["env_event"] = EnvEvent.from_dict(data["env_event"])
        if data.get("verification") is not None:
            data["verification"] = VerificationEvent.from_dict(data["verification"])
        return cls(**data)


@dataclass
class SessionTrace:
    """One rollout, start to end. ``correlation_id`` is the trainer's id for it (the ``cid`` of the inference URL)."""

    session_id: str
    run_id: str
    env_name: str
    seed: int | None = None
    policy_id: str | None = None
    correlation_id: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    status: str = "ok"
    error: str | None = None
    steps: list[StepTrace] = field(default_factory=list)
    outcome_reward: OutcomeReward | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in SESSION_STATUSES:
            raise ValueError(f"session status must be one of {SESSION_STATUSES}, got {self.status!r}")

    @property
    def total_reward(self) -> float:
        """The session's return: the outcome reward's total, else the sum of the step rewards."""
        if self.outcome_reward is not None:
            return self.outcome_reward.total
        return sum(step.reward for step in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionTrace:
        data = dict(data)
        data["steps"] = [StepTrace.from_dict(s) for s in data.get("steps") or ()]
        if data.get("outcome_reward") is not None:
            data["outcome_reward"] = OutcomeReward.from_dict(data["outcome_reward"])
        return cls(**data)
