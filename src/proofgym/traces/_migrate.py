"""Bringing a store written by an older proofgym to the current schema, in place, in one transaction."""

from __future__ import annotations

from sqlalchemy import select, text, update
from sqlalchemy.engine import Connection

from proofgym.traces import _schema as schema
from proofgym.traces._codec import index_keys

_BACKFILL_CHUNK = 1000


def migrate(conn: Connection, version: int) -> None:
    """Migrate the store behind ``conn`` from schema ``version`` (one of ``MIGRATABLE_FROM``) to the current one."""
    if version == 1:
        _v1_to_v2(conn)
    conn.execute(update(schema.schema_info).where(schema.schema_info.c.name == schema.SCHEMA_NAME)
                 .values(version=schema.SCHEMA_VERSION))


def _v1_to_v2(conn: Connection) -> None:
    """Add ``sessions.outcome`` and ``sessions.task_id``, fill them from each session's rows, add the indexes."""
    s, st, v = schema.sessions, schema.steps, schema.verifications
    for name in ("outcome", "task_id"):
        conn.execute(text(f"ALTER TABLE sessions ADD COLUMN {name} VARCHAR"))
    after = ""
    while True:
        ids = [sid for (sid,) in conn.execute(select(s.c.session_id).where(s.c.session_id > after)
                                               .order_by(s.c.session_id).limit(_BACKFILL_CHUNK))]
        if not ids:
            break
        after = ids[-1]
        metadata = dict(conn.execute(select(s.c.session_id, s.c.metadata).where(s.c.session_id.in_(ids))).all())
        first: dict[str, object] = {}
        last: dict[str, tuple[int, object]] = {}
        for sid, index, observation, info in conn.execute(
                select(st.c.session_id, st.c.step_index, st.c.observation, st.c.info)
                .where(st.c.session_id.in_(ids)).order_by(st.c.session_id, st.c.step_index)):
            first.setdefault(sid, observation)
            last[sid] = (index, info)
        # as a new write: the verification of the last step only
        verdicts = {sid: outcome for sid, index, outcome in conn.execute(
            select(v.c.session_id, v.c.step_index, v.c.outcome).where(v.c.session_id.in_(ids)))
            if sid in last and last[sid][0] == index}
        rows = []
        for sid in ids:
            outcome, task_id = index_keys(metadata.get(sid), first.get(sid), last.get(sid, (0, None))[1],
                                         verdicts.get(sid))
            if outcome is not None or task_id is not None:
                rows.append({"sid": sid, "outcome": outcome, "task_id": task_id})
        if rows:
            conn.execute(text("UPDATE sessions SET outcome = :outcome, task_id = :task_id WHERE session_id = :sid"),
                         rows)
    for index in s.indexes:
        index.create(conn, checkfirst=True)
