"""The trace store: every rollout recorded as a session of steps, events and rewards.

``TraceStore`` (SQLite by default, Postgres by URL) is imported on first use, so ``import proofgym.traces`` does not
load SQLAlchemy.
"""

from typing import TYPE_CHECKING, Any

from proofgym.traces._codec import validate_session
from proofgym.traces._errors import (
    DuplicateSessionError,
    SchemaVersionError,
    TraceStoreError,
    TraceValidationError,
    TraceWriteError,
    UnknownRunError,
)
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
from proofgym.traces._summaries import RUN_STATUSES, RunSummary, SessionSummary
from proofgym.traces._writer import TraceWriter

if TYPE_CHECKING:  # what the lazy names are, for type checkers (imported on first use at run time)
    from proofgym.traces._store import DEFAULT_PATH, TraceStore

_LAZY = {"TraceStore": "TraceStore", "DEFAULT_PATH": "DEFAULT_PATH"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from proofgym.traces import _store

        return getattr(_store, _LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_PATH",
    "EVENT_REWARD_KINDS",
    "RUN_STATUSES",
    "SESSION_STATUSES",
    "DuplicateSessionError",
    "EnvEvent",
    "EventReward",
    "LMCallEvent",
    "OutcomeReward",
    "RunSummary",
    "SchemaVersionError",
    "SessionSummary",
    "SessionTrace",
    "StepTrace",
    "TraceStore",
    "TraceStoreError",
    "TraceValidationError",
    "TraceWriteError",
    "TraceWriter",
    "UnknownRunError",
    "VerificationEvent",
    "validate_session",
]
