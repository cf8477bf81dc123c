"""``TraceStore``: sessions, runs and their events in SQLite (WAL) or Postgres, through SQLAlchemy Core.

Every write is one transaction: a session and all its rows commit together, so a crash (even SIGKILL) leaves each
session either complete or absent. Sessions are written once; writing a stored session id again raises
``DuplicateSessionError`` (nothing is replaced). On SQLite, write transactions start with ``BEGIN IMMEDIATE`` and
threads of one process take a lock first, so writers queue instead of failing on a busy database; readers never
block writers (WAL).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from sqlalchemy import and_, create_engine, event, func, insert, inspect, or_, select, text, update
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from proofgym.core import redact_secrets, redact_text, redact_url
from proofgym.traces import _schema as schema
from proofgym.traces._codec import EncodedSession, Fields, RawJSON, decode_session, dumps_json, encode_session
from proofgym.traces._dataset import to_dataset as _sessions_to_dataset
from proofgym.traces._migrate import migrate
from proofgym.traces._errors import (
    DuplicateSessionError,
    SchemaVersionError,
    TraceStoreError,
    UnknownRunError,
)
from proofgym.traces._records import SESSION_STATUSES, SessionTrace
from proofgym.traces._summaries import RUN_STATUSES, RunSummary, SessionSummary

DEFAULT_PATH = "traces/proofgym.db"
_BUSY_TIMEOUT_S = 30.0
_IN_CHUNK = 500  # ids per IN (...) clause, well under SQLite's parameter limit
_PG_INIT_LOCK = 0x70726F6F66  # advisory lock key: one process at a time creates the tables
_SUMMARY_COLUMNS = ("session_id", "run_id", "env_name", "seed", "policy_id", "correlation_id", "status", "error",
                    "started_at", "ended_at", "n_steps", "total_reward", "outcome_score", "outcome", "task_id")
#: list_sessions(order=...): the listing orders, each ending on the session id so pages never overlap.
SESSION_ORDERS = ("started", "-started", "reward", "-reward", "score", "-score")


class TraceStore:
    """Where rollouts are recorded: a SQLite file (a path), or a SQLite or Postgres SQLAlchemy URL.

    ``postgresql://`` and ``postgres://`` URLs use the psycopg (3) driver; ``sqlite://`` is an in-memory store.

    ``create=False`` opens an existing store only: a missing SQLite file or a database without the trace tables is
    a ``TraceStoreError`` and nothing is created. Usable from many threads; use as a context manager or ``close()``.
    """

    read_chunk = 200  # sessions loaded per round trip by iter_sessions / export

    def __init__(self, url: str | os.PathLike[str] = DEFAULT_PATH, *, create: bool = True) -> None:
        sa_url, self._sqlite, memory = _resolve(url, create)
        self._engine = _engine(sa_url, self._sqlite, memory)
        # What messages and listings show: no password, nor a credential in the query (?password=, ?sslkey=...).
        self.url: str = redact_url(sa_url.render_as_string(hide_password=True))
        # SQLite has one writer at a time: threads of this process queue on a lock rather than on busy retries.
        # An in-memory database is one shared connection, so reads take the lock too.
        lock = threading.RLock()
        self._write_lock = lock if self._sqlite else contextlib.nullcontext()
        self._read_lock = lock if memory else contextlib.nullcontext()
        self._known_runs: set[str] = set()
        self._inserts: dict[str, tuple[str, tuple[str, ...] | None]] = {}
        self._closed = False
        try:
            self._open_schema(create)
        except BaseException:
            self._engine.dispose()
            raise

    def __repr__(self) -> str:
        return f"TraceStore({self.url!r})"

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the database connections; the store cannot be used afterwards."""
        if not self._closed:
            self._closed = True
            self._engine.dispose()

    # -- runs -------------------------------------------------------------------------------------------------

    def start_run(self, run_id: str | None = None, *, kind: str, env_name: str | None = None,
                  config: Mapping[str, Any] | None = None) -> str:
        """Record a new run (status ``running``) and return its id (a fresh uuid hex when ``run_id`` is None). The
        ``config`` is stored with no credential in it (:func:`~proofgym.core.redact_secrets`)."""
        run_id = uuid.uuid4().hex if run_id is None else run_id
        f = Fields(f"run {run_id!r}")
        row = {
            "run_id": f.text("run_id", run_id, nonempty=True), "kind": f.text("kind", kind, nonempty=True),
            "env_name": f.text("env_name", env_name, optional=True), "status": "running",
            "config": f.payload("config", {} if config is None else redact_secrets(config), mapping=True),
            "summary": None, "started_at": time.time(), "ended_at": None,
        }
        with self._write("starting run " + repr(run_id)) as conn:
            if conn.execute(select(schema.runs.c.run_id).where(schema.runs.c.run_id == run_id)).first():
                raise TraceStoreError(f"run {run_id!r} already exists in {self.url}")
            conn.execute(insert(schema.runs), [row])
        self._known_runs.add(run_id)
        return run_id

    def finish_run(self, run_id: str, *, status: str = "ok", summary: Mapping[str, Any] | None = None) -> None:
        """Mark a run finished with ``status`` (ok, error, timeout, cancelled) and an optional summary mapping, stored
        with no credential in it (:func:`~proofgym.core.redact_secrets`: an error quoting a URL with a password)."""
        f = Fields(f"run {run_id!r}")
        f.text("run_id", run_id, nonempty=True)
        if status not in RUN_STATUSES[1:]:
            raise f.fail("status", f"one of {', '.join(RUN_STATUSES[1:])}", status)
        values = {"status": status, "ended_at": time.time(),
                  "summary": None if summary is None else f.payload("summary", redact_secrets(summary), mapping=True)}
        with self._write("finishing run " + repr(run_id)) as conn:
            result = conn.execute(update(schema.runs).where(schema.runs.c.run_id == run_id).values(**values))
            if result.rowcount == 0:
                raise UnknownRunError([run_id])

    @contextlib.contextmanager
    def ending_run(self, run_id: str) -> Iterator[str]:
        """Ends the run ``run_id`` (started already) however the block ends, so that no run is left ``running``:
        an exception marks it ``cancelled`` (Ctrl-C, a cancelled task, ``SystemExit``) or ``error``, with the
        exception in its summary, and goes on; a block that ends normally and did not call :meth:`finish_run`
        marks it ``ok``. Ending the run cannot hide the exception that ended it."""
        import asyncio

        try:
            yield run_id
        except BaseException as exc:
            cancelled = isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError))
            with contextlib.suppress(Exception):
                if self._status(run_id) == "running":
                    self.finish_run(run_id, status="cancelled" if cancelled else "error",
                                    summary={"error": redact_text(f"{type(exc).__name__}: {exc}")[:2000]})
            raise
        if self._status(run_id) == "running":
            self.finish_run(run_id, status="ok")

    def _status(self, run_id: str) -> str | None:
        with self._read() as conn:
            return conn.execute(select(schema.runs.c.status).where(schema.runs.c.run_id == run_id)).scalar()

    def list_runs(self, *, counts: bool = True) -> list[RunSummary]:
        """Every run, oldest first, with its number of sessions and their mean reward (``counts=False``: 0 and
        None, without reading the sessions)."""
        s, r = schema.sessions, schema.runs
        if counts:
            tally = (select(s.c.run_id, func.count().label("n_sessions"), func.avg(s.c.total_reward).label("mean"))
                     .group_by(s.c.run_id).subquery())
            query = (select(r, tally.c.n_sessions, tally.c.mean)
                     .select_from(r.outerjoin(tally, r.c.run_id == tally.c.run_id)))
        else:
            query = select(r)
        with self._read() as conn:
            rows = conn.execute(query.order_by(r.c.started_at, r.c.run_id)).mappings().all()
        return [RunSummary(run_id=m["run_id"], kind=m["kind"], env_name=m["env_name"], status=m["status"],
                           started_at=m["started_at"], ended_at=m["ended_at"], config=m["config"],
                           summary=m["summary"], n_sessions=m.get("n_sessions") or 0,
                           mean_reward=None if m.get("mean") is None else float(m["mean"])) for m in rows]

    # -- writing ----------------------------------------------------------------------------------------------

    def write_session(self, session: SessionTrace) -> None:
        """Validate and store one session in one transaction."""
        self._write_encoded([encode_session(session)])

    def write_sessions(self, sessions: Sequence[SessionTrace]) -> None:
        """Validate and store several sessions in one transaction: all are stored, or none (on any error)."""
        if isinstance(sessions, SessionTrace):
            raise TypeError("write_sessions takes a sequence of sessions; use write_session for one")
        self._write_encoded([encode_session(s) for s in sessions])

    def _write_encoded(self, batch: Sequence[EncodedSession]) -> None:
        if not batch:
            return
        ids = [e.session_id for e in batch]
        repeated = sorted(sid for sid, n in Counter(ids).items() if n > 1)
        if repeated:
            raise DuplicateSessionError(repeated, "given more than once in one batch")
        what = f"writing session{'s' if len(ids) > 1 else ''} {_ids(ids)}"
        try:
            with self._write(what) as conn:
                unknown = {e.run_id for e in batch} - self._known_runs
                if unknown:
                    found = {rid for (rid,) in conn.execute(select(schema.runs.c.run_id)
                                                              .where(schema.runs.c.run_id.in_(sorted(unknown))))}
                    missing = unknown - found
                    if missing:
                        raise UnknownRunError(sorted(missing), [e.session_id for e in batch if e.run_id in missing])
                    self._known_runs |= found
                now = time.time()
                self._insert(conn, schema.sessions, [{**e.session, "written_at": now} for e in batch])
                for table in schema.CHILD_TABLES:
                    rows = [row for e in batch for row in getattr(e, table.name)]
                    if rows:
                        self._insert(conn, table, rows)
        except TraceStoreError as exc:
            # A stored id breaks the sessions table's primary key; found only then, so the usual write
            # costs no lookup.
            if isinstance(exc.__cause__, IntegrityError):
                stored = self._stored_ids(ids)
                if stored:
                    raise DuplicateSessionError(stored) from None
            raise

    def _insert(self, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert ``rows`` (every column's value, JSON columns as encoded text) with the driver's executemany.

        The statement is compiled once per table; rows skip SQLAlchemy's per-row processing, which the codec
        has already done (validated values, JSON serialized once). Driver errors become SQLAlchemy's
        (``IntegrityError`` ...), as from ``conn.execute``.
        """
        prepared = self._inserts.get(table.name)
        if prepared is None:
            compiled = insert(table).compile(dialect=self._engine.dialect)
            order = tuple(compiled.positiontup) if compiled.positional and compiled.positiontup else None
            prepared = self._inserts[table.name] = (str(compiled), order)
        sql, order = prepared
        if order is None:
            params: list[Any] = [{key: _plain(value) for key, value in row.items()} for row in rows]
        else:
            params = [tuple(_plain(row[key]) for key in order) for row in rows]
        # The driver's own cursor: SQLAlchemy's per-statement machinery cost more than the insert itself.
        dbapi_error = self._engine.dialect.loaded_dbapi.Error
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]  # an open connection's
        try:
            cursor.executemany(sql, params)
        except dbapi_error as exc:
            raise DBAPIError.instance(sql, None, exc, dbapi_error) from exc
        finally:
            cursor.close()

    def _stored_ids(self, ids: Sequence[str]) -> list[str]:
        s = schema.sessions
        with self._read() as conn:
            return [sid for chunk in _chunks(ids) for (sid,) in
                    conn.execute(select(s.c.session_id).where(s.c.session_id.in_(chunk)))]

    # -- reading ----------------------------------------------------------------------------------------------

    def get_session(self, session_id: str) -> SessionTrace | None:
        """The session with this id, or None."""
        found = self.get_sessions([session_id])
        return found[0] if found else None

    def get_sessions(self, session_ids: Sequence[str]) -> list[SessionTrace]:
        """The sessions with these ids, in the order given (an id that is not stored is left out, a repeated one
        comes once): read together, a few queries however many ids (not one round of queries per session)."""
        f = Fields()
        if isinstance(session_ids, (str, bytes)):
            raise f.fail("session_ids", "a list of session ids, not one string", session_ids)
        wanted = list(dict.fromkeys(f.text("session_id", sid) for sid in session_ids))
        s = schema.sessions
        with self._read() as conn:
            rows = [row for chunk in _chunks(wanted)
                    for row in conn.execute(select(s).where(s.c.session_id.in_(chunk))).mappings().all()]
            found = {session.session_id: session for session in self._load(conn, rows)}
        return [found[sid] for sid in wanted if sid in found]

    def find_by_correlation_id(self, correlation_id: str) -> list[SessionTrace]:
        """The sessions carrying this correlation id (the trainer's ``cid``), oldest first."""
        Fields().text("correlation_id", correlation_id)
        s = schema.sessions
        with self._read() as conn:
            rows = conn.execute(select(s).where(s.c.correlation_id == correlation_id)
                                .order_by(s.c.started_at, s.c.session_id))
            return self._load(conn, rows.mappings().all())

    def list_sessions(self, *, run_id: str | None = None, env_name: str | None = None,
                      min_reward: float | None = None, max_reward: float | None = None, status: str | None = None,
                      limit: int | None = None, offset: int = 0, order: str = "started",
                      **more: Any) -> list[SessionSummary]:
        """Summaries of the sessions matching every given filter (bounds inclusive), oldest first by default.

        More filters (keywords): ``outcome``, ``seed``, ``task_id``, ``min_score`` / ``max_score`` (the outcome
        score), ``id_prefix`` (session ids that start with it). ``order`` is one of ``SESSION_ORDERS`` (a leading
        ``-``: descending).
        """
        s = schema.sessions
        where = _where(run_id, env_name, min_reward, max_reward, status, **more)
        limit, offset = _page(limit, offset)
        # The page's ids first, from an index alone where the filters allow; then only those rows are read
        # (a deep page would otherwise read every row it skips).
        page = (select(s.c.session_id).where(*where).order_by(*_order(order)).limit(limit)
                .offset(offset or None))
        query = (select(*(s.c[name] for name in _SUMMARY_COLUMNS)).where(s.c.session_id.in_(page.scalar_subquery()))
                 .order_by(*_order(order)))
        with self._read() as conn:
            return [SessionSummary(**row) for row in conn.execute(query).mappings()]

    def count_sessions(self, *, run_id: str | None = None, env_name: str | None = None,
                       min_reward: float | None = None, max_reward: float | None = None,
                       status: str | None = None, **more: Any) -> int:
        """How many sessions match the filters (those of ``list_sessions``)."""
        where = _where(run_id, env_name, min_reward, max_reward, status, **more)
        with self._read() as conn:
            return conn.execute(select(func.count()).select_from(schema.sessions).where(*where)).scalar_one()

    def run_statistics(self, run_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Per run id (or for ``run_id`` only): its ``n_sessions``, their counts ``by_status`` and ``by_outcome``,
        and their ``reward`` min, mean and max; one pass over an index."""
        s = schema.sessions
        query = (select(s.c.run_id, s.c.status, s.c.outcome, func.count(), func.min(s.c.total_reward),
                        func.sum(s.c.total_reward), func.max(s.c.total_reward))
                 .group_by(s.c.run_id, s.c.status, s.c.outcome))
        if run_id is not None:
            query = query.where(s.c.run_id == Fields().text("run_id", run_id))
        stats: dict[str, dict[str, Any]] = {}
        with self._read() as conn:
            rows = conn.execute(query).all()
        for rid, status, outcome, n, low, total, high in rows:
            run = stats.setdefault(rid, {"n_sessions": 0, "by_status": {}, "by_outcome": {},
                                         "reward": {"min": low, "sum": 0.0, "max": high}})
            run["n_sessions"] += n
            run["by_status"][status] = run["by_status"].get(status, 0) + n
            key = outcome or "none"
            run["by_outcome"][key] = run["by_outcome"].get(key, 0) + n
            reward = run["reward"]
            reward["min"], reward["max"] = min(reward["min"], low), max(reward["max"], high)
            reward["sum"] += float(total)
        for run in stats.values():
            reward = run["reward"]
            reward["mean"] = reward.pop("sum") / run["n_sessions"]
        return stats

    def iter_sessions(self, *, run_id: str | None = None, env_name: str | None = None,
                      min_reward: float | None = None, max_reward: float | None = None, status: str | None = None,
                      limit: int | None = None, offset: int = 0) -> Iterator[SessionTrace]:
        """The full sessions matching the filters, oldest first, loaded ``read_chunk`` at a time."""
        s = schema.sessions
        where = _where(run_id, env_name, min_reward, max_reward, status)
        remaining, offset = _page(limit, offset)
        after: tuple[float, str] | None = None
        while remaining is None or remaining > 0:
            size = self.read_chunk if remaining is None else min(self.read_chunk, remaining)
            query = select(s).where(*where).order_by(s.c.started_at, s.c.session_id).limit(size)
            if after is None:
                query = query.offset(offset or None)
            else:
                query = query.where(or_(s.c.started_at > after[0],
                                        and_(s.c.started_at == after[0], s.c.session_id > after[1])))
            with self._read() as conn:
                chunk = self._load(conn, conn.execute(query).mappings().all())
            yield from chunk
            if len(chunk) < size:
                return
            after = (chunk[-1].started_at, chunk[-1].session_id)
            if remaining is not None:
                remaining -= len(chunk)

    def _load(self, conn: Connection, session_rows: Sequence[Mapping[Any, Any]]) -> list[SessionTrace]:
        ids = [row["session_id"] for row in session_rows]
        children: dict[str, dict[str, list[Mapping[Any, Any]]]] = {t.name: defaultdict(list)
                                                                   for t in schema.CHILD_TABLES}
        for table in schema.CHILD_TABLES:
            for chunk in _chunks(ids):
                for row in conn.execute(select(table).where(table.c.session_id.in_(chunk))).mappings():
                    children[table.name][row["session_id"]].append(row)
        # The child tables in decode_session's order (steps, LM calls, env events, verifications, event rewards).
        return [decode_session(row, *(children[t.name][row["session_id"]]  # type: ignore[arg-type, call-arg]
                                      for t in schema.CHILD_TABLES[:-1]),
                               next(iter(children["outcome_rewards"].get(row["session_id"], ())), None))
                for row in session_rows]

    # -- export -----------------------------------------------------------------------------------------------

    def export_jsonl(self, path: str | os.PathLike[str], **filters: Any) -> int:
        """Write one ``SessionTrace.to_dict()`` JSON object per line; returns the number of sessions written.

        The file appears whole or not at all (written beside it, then renamed).
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        count = 0
        try:
            with partial.open("w", encoding="utf-8") as out:
                for session in self.iter_sessions(**filters):
                    out.write(json.dumps(session.to_dict(), ensure_ascii=False, allow_nan=False))
                    out.write("\n")
                    count += 1
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        return count

    def to_dataset(self, **filters: Any) -> Any:
        """A Hugging Face ``datasets.Dataset`` of flat rows (ids, rewards, prompt / messages / completion, JSON)."""
        return _sessions_to_dataset(self.iter_sessions(**filters))

    # -- plumbing ---------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        self._check_open()
        with self._read_lock, _database_errors(self.url, "reading"), self._engine.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[Connection]:
        self._check_open()
        with self._write_lock, _database_errors(self.url, what), self._engine.connect() as conn:
            with conn.execution_options(proofgym_write=True).begin():
                yield conn

    def _check_open(self) -> None:
        if self._closed:
            raise TraceStoreError(f"trace store {self.url} is closed")

    def _open_schema(self, create: bool) -> None:
        with (self._write("creating the trace tables") if create else self._read()) as conn:
            if create and conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INIT_LOCK})
            version = None
            if inspect(conn).has_table(schema.schema_info.name):
                version = conn.execute(select(schema.schema_info.c.version)
                                       .where(schema.schema_info.c.name == schema.SCHEMA_NAME)).scalar()
            if version is None:
                if not create:
                    raise TraceStoreError(f"{self.url} is not a proofgym trace store (it has no schema_info row)")
                schema.metadata.create_all(conn)
                conn.execute(insert(schema.schema_info), [{"name": schema.SCHEMA_NAME,
                                                           "version": schema.SCHEMA_VERSION,
                                                           "created_at": time.time()}])
            elif version in schema.MIGRATABLE_FROM:
                pass  # migrated below, in a write transaction of its own
            elif version != schema.SCHEMA_VERSION:
                newer = version > schema.SCHEMA_VERSION
                raise SchemaVersionError(
                    f"trace store {self.url} has schema version {version}, "
                    f"{'newer' if newer else 'older'} than the version {schema.SCHEMA_VERSION} this proofgym reads; "
                    + ("upgrade proofgym to open it" if newer else "it cannot be migrated; export it with the "
                       "proofgym that wrote it"))
        if version in schema.MIGRATABLE_FROM:
            self._migrate()

    def _migrate(self) -> None:
        """Migrate an older store in place; a store another process migrated meanwhile is left as it is."""
        info = schema.schema_info
        with self._write(f"migrating the trace tables to version {schema.SCHEMA_VERSION}") as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INIT_LOCK})
            version = conn.execute(select(info.c.version).where(info.c.name == schema.SCHEMA_NAME)).scalar()
            if version in schema.MIGRATABLE_FROM:
                migrate(conn, version)


def _resolve(url: str | os.PathLike[str], create: bool) -> tuple[URL, bool, bool]:
    """(SQLAlchemy URL, is SQLite, is in-memory) for a path or URL string; checks or makes the SQLite file's folder."""
    if isinstance(url, os.PathLike) or (isinstance(url, str) and "://" not in url):
        path = Path(url).expanduser()
        if not str(url):
            raise TraceStoreError("trace store path is empty")
        sa_url = URL.create("sqlite", database=str(path.absolute()))
    elif isinstance(url, str):
        try:
            sa_url = make_url(url)
        except (ArgumentError, ValueError) as exc:  # ValueError: a port that is not a number
            raise TraceStoreError(f"trace store URL {redact_url(url)!r} is not a database URL ({exc})") from None
    else:
        raise TypeError(f"trace store location must be a path or a URL string, got {type(url).__name__}")
    backend = sa_url.get_backend_name()
    if backend in ("postgresql", "postgres"):
        if sa_url.drivername in ("postgresql", "postgres"):
            sa_url = sa_url.set(drivername="postgresql+psycopg")  # the driver proofgym depends on
        return sa_url, False, False
    if backend != "sqlite":
        raise TraceStoreError(f"trace store URL {redact_url(sa_url.render_as_string())!r}: unsupported database "
                              f"{backend!r}; use a SQLite path or URL, or postgresql+psycopg://...")
    database = sa_url.database or ""
    if database in ("", ":memory:"):
        return sa_url, True, True
    path = Path(database)
    if path.is_dir():
        raise TraceStoreError(f"trace store {path} is a directory, expected a SQLite file")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.exists():
        raise TraceStoreError(f"trace store {path} does not exist")
    return sa_url, True, False


def _engine(url: URL, sqlite: bool, memory: bool) -> Engine:
    options: dict[str, Any] = {"json_serializer": dumps_json}
    if sqlite:
        options["connect_args"] = {"timeout": _BUSY_TIMEOUT_S, "check_same_thread": False}
        if memory:
            options["poolclass"] = StaticPool
    else:
        options["pool_pre_ping"] = True
    try:
        engine = create_engine(url, **options)
    except (ImportError, NoSuchModuleError) as exc:
        raise TraceStoreError(f"trace store {redact_url(url.render_as_string())}: the database driver is not installed "
                              f"({exc}); for Postgres: pip install 'psycopg[binary]'") from None
    if sqlite:
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN (below) instead of the sqlite3 module's implicit one.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes; WAL keeps it consistent
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    # IMMEDIATE takes the write lock up front: a writer that first reads cannot fail later on a busy snapshot.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("proofgym_write") else "BEGIN")


@contextlib.contextmanager
def _database_errors(url: str, what: str) -> Iterator[None]:
    """Database failures as ``TraceStoreError`` naming the store and the operation."""
    try:
        yield
    except DBAPIError as exc:
        raise TraceStoreError(f"trace store {url}: {what} failed: {exc.orig}") from exc
    except SQLAlchemyError as exc:
        raise TraceStoreError(f"trace store {url}: {what} failed: {exc}") from exc


def _where(run_id: Any, env_name: Any, min_reward: Any, max_reward: Any, status: Any, *, outcome: Any = None,
           seed: Any = None, task_id: Any = None, min_score: Any = None, max_score: Any = None,
           id_prefix: Any = None) -> list[Any]:
    s, f, where = schema.sessions, Fields(), []
    if id_prefix is not None:  # a range on the primary key: U+10FFFF sorts after any character in UTF-8
        prefix = f.text("id_prefix", id_prefix, nonempty=True)
        where += [s.c.session_id >= prefix, s.c.session_id < prefix + "\U0010ffff"]
    for name, value in (("run_id", run_id), ("env_name", env_name), ("outcome", outcome), ("task_id", task_id)):
        if value is not None:
            where.append(s.c[name] == f.text(name, value))
    if seed is not None:
        where.append(s.c.seed == f.integer("seed", seed))
    for name, value, compare in (("min_score", min_score, s.c.outcome_score.__ge__),
                                 ("max_score", max_score, s.c.outcome_score.__le__)):
        bound = f.number(name, value, optional=True)
        if bound is not None:
            where.append(compare(bound))
    if status is not None:
        if status not in SESSION_STATUSES:
            raise f.fail("status", f"one of {', '.join(SESSION_STATUSES)}", status)
        where.append(s.c.status == status)
    low = f.number("min_reward", min_reward, optional=True)
    high = f.number("max_reward", max_reward, optional=True)
    if low is not None:
        where.append(s.c.total_reward >= low)
    if high is not None:
        where.append(s.c.total_reward <= high)
    return where


def _order(order: Any) -> tuple[Any, ...]:
    s = schema.sessions
    if order not in SESSION_ORDERS:
        raise Fields().fail("order", f"one of {', '.join(SESSION_ORDERS)}", order)
    column = {"started": s.c.started_at, "reward": s.c.total_reward, "score": s.c.outcome_score}[order.lstrip("-")]
    if order.startswith("-"):
        return column.desc(), s.c.session_id.desc()
    return column, s.c.session_id


def _page(limit: Any, offset: Any) -> tuple[int | None, int]:
    f = Fields()
    return (f.integer("limit", limit, optional=True, nonnegative=True),
            f.integer("offset", offset, nonnegative=True))


def _plain(value: Any) -> Any:
    """``RawJSON`` (a ``str`` subclass) as a plain ``str``, which every driver binds as text."""
    return str(value) if type(value) is RawJSON else value


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), _IN_CHUNK):
        yield ids[start:start + _IN_CHUNK]


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

