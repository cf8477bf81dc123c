"""The trace store's tables (SQLAlchemy Core; the same DDL on SQLite and Postgres).

A session row and all its child rows are inserted in one transaction, so readers see a session whole or not at all.
Child rows are keyed by ``(session_id, step_index[, position])``; payloads are JSON. Bump ``SCHEMA_VERSION`` on any
change a reader of the previous version could not read.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.ext.compiler import compiles


class Payload(JSON):
    """A JSON column. On SQLite it is declared ``JSON_TEXT``: a column declared ``JSON`` has numeric affinity,
    so a payload that is a bare number went in as a number (an integer beyond 64 bits came back a float);
    with text affinity every payload is kept as the JSON text written. Postgres keeps ``JSON``."""

    cache_ok = True


@compiles(Payload, "sqlite")
def _payload_on_sqlite(type_: Payload, compiler: Any, **kw: Any) -> str:
    return "JSON_TEXT"


SCHEMA_VERSION = 2
SCHEMA_NAME = "traces"
#: Version 2 added ``sessions.outcome`` and ``sessions.task_id`` and the per-run indexes a viewer pages by;
#: ``migrate`` brings a version-1 store there in place.
MIGRATABLE_FROM = (1,)

metadata = MetaData()

schema_info = Table(
    "schema_info", metadata,
    Column("name", String(64), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("created_at", Double, nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("run_id", String, primary_key=True),
    Column("kind", String, nullable=False),
    Column("env_name", String),
    Column("status", String, nullable=False),
    Column("config", Payload, nullable=False),
    Column("summary", Payload),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
)

sessions = Table(
    "sessions", metadata,
    Column("session_id", String, primary_key=True),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("env_name", String, nullable=False),
    Column("seed", BigInteger),
    Column("policy_id", String),
    Column("correlation_id", String),
    Column("status", String, nullable=False),
    Column("error", Text),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
    Column("n_steps", Integer, nullable=False),
    Column("total_reward", Double, nullable=False),
    Column("outcome_score", Double),
    Column("metadata", Payload, nullable=False),
    Column("written_at", Double, nullable=False),
    Column("outcome", String),  # the last verification's outcome (else the last step's info["outcome"])
    Column("task_id", String),  # what was attempted: metadata task_id, else the first observation's record id
    Index("ix_sessions_run_id", "run_id"),
    Index("ix_sessions_env_name", "env_name"),
    Index("ix_sessions_correlation_id", "correlation_id"),
    Index("ix_sessions_total_reward", "total_reward"),
    Index("ix_sessions_started_at", "started_at", "session_id"),
    Index("ix_sessions_run_started", "run_id", "started_at", "session_id"),
    Index("ix_sessions_run_reward", "run_id", "total_reward", "session_id"),
    Index("ix_sessions_run_outcome", "run_id", "outcome", "total_reward", "session_id"),
    Index("ix_sessions_run_tally", "run_id", "status", "outcome", "total_reward"),  # run_statistics: one scan
    Index("ix_sessions_run_score", "run_id", "outcome_score", "session_id"),
    Index("ix_sessions_run_seed", "run_id", "seed"),
    Index("ix_sessions_task_id", "task_id"),
)


def _session_fk() -> Column[str]:
    return Column("session_id", String, ForeignKey("sessions.session_id"), primary_key=True)


steps = Table(
    "steps", metadata,
    _session_fk(),
    Column("step_index", Integer, primary_key=True),
    Column("observation", Payload),
    Column("action", Payload),
    Column("reward", Double, nullable=False),
    Column("done", Boolean, nullable=False),
    Column("truncated", Boolean, nullable=False),
    Column("info", Payload, nullable=False),
)

lm_calls = Table(
    "lm_calls", metadata,
    _session_fk(),
    Column("step_index", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("model", String, nullable=False),
    Column("request", Payload),
    Column("response", Payload),
    Column("prompt_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("latency_s", Double),
    Column("error", Text),
)

env_events = Table(
    "env_events", metadata,
    _session_fk(),
    Column("step_index", Integer, primary_key=True),
    Column("tool", String),
    Column("args", Payload),
    Column("result", Payload),
    Column("reward", Double, nullable=False),
    Column("done", Boolean, nullable=False),
    Column("truncated", Boolean, nullable=False),
)

verifications = Table(
    "verifications", metadata,
    _session_fk(),
    Column("step_index", Integer, primary_key=True),
    Column("verifier", String, nullable=False),
    Column("outcome", String, nullable=False),
    Column("verdict", Payload, nullable=False),
)

event_rewards = Table(
    "event_rewards", metadata,
    _session_fk(),
    Column("step_index", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("value", Double, nullable=False),
    Column("kind", String, nullable=False),
    Column("key", String),
    Column("source", String, nullable=False),
    Column("annotation", Payload),
)

outcome_rewards = Table(
    "outcome_rewards", metadata,
    _session_fk(),
    Column("total", Double, nullable=False),
    Column("steps", Integer, nullable=False),
    Column("score", Double),
    Column("kind", String, nullable=False),
    Column("source", String, nullable=False),
    Column("annotation", Payload),
)

# Insert order (parents first) and the child tables read back per session.
SESSION_TABLES = (sessions, steps, lm_calls, env_events, verifications, event_rewards, outcome_rewards)
CHILD_TABLES = SESSION_TABLES[1:]
