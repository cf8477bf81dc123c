"""The trace store: every rollout recorded as a session of steps, events and rewards."""

from proofgym.traces._records import (
    EVENT_REWARD_KINDS,
    SESSION_STATUSES,
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    VerificationEvent,
)

__all__ = [
    "EVENT_REWARD_KINDS",
    "SESSION_STATUSES",
    "EnvEvent",
    "EventReward",
    "LMCallEvent",
    "OutcomeReward",
    "SessionTrace",
    "StepTrace",
    "VerificationEvent",
]
