"""What the trace store raises: one clear sentence naming the session, run or field at fault."""

from __future__ import annotations

from typing import Sequence


class TraceStoreError(Exception):
    """A trace store cannot be opened, read or written as asked."""


class TraceValidationError(TraceStoreError, ValueError):
    """A session, run or filter is not what the store accepts (wrong type, unknown status, NaN or infinite value)."""


class DuplicateSessionError(TraceStoreError):
    """A session id is already in the store (sessions are written once; they are never replaced)."""

    def __init__(self, session_ids: Sequence[str], reason: str = "already stored (sessions are written once)") -> None:
        self.session_ids = list(session_ids)
        shown = ", ".join(repr(s) for s in self.session_ids[:10])
        more = f" and {len(self.session_ids) - 10} more" if len(self.session_ids) > 10 else ""
        super().__init__(f"session id {reason}: {shown}{more}")


class UnknownRunError(TraceStoreError, KeyError):
    """A session names a run that ``start_run`` never created."""

    def __init__(self, run_ids: Sequence[str], session_ids: Sequence[str] = ()) -> None:
        self.run_ids = list(run_ids)
        self.session_ids = list(session_ids)
        whose = f" (sessions {', '.join(repr(s) for s in self.session_ids[:10])})" if self.session_ids else ""
        super().__init__(f"unknown run id {', '.join(repr(r) for r in self.run_ids)}{whose}; "
                         "create it with TraceStore.start_run first")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class SchemaVersionError(TraceStoreError):
    """The store was written by another schema version than this proofgym reads."""


class TraceWriteError(TraceStoreError):
    """Sessions a ``TraceWriter`` could not write: ``failures`` pairs each session id with its exception."""

    def __init__(self, failures: Sequence[tuple[str, BaseException]]) -> None:
        self.failures = list(failures)
        self.session_ids = [sid for sid, _ in self.failures]
        lines = [f"  {sid}: {type(exc).__name__}: {exc}" for sid, exc in self.failures[:10]]
        if len(self.failures) > 10:
            lines.append(f"  ... and {len(self.failures) - 10} more")
        super().__init__(f"{len(self.failures)} session(s) could not be written to the trace store:\n"
                         + "\n".join(lines))
