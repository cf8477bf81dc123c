"""Fixtures: a SQLite store per test, and a Postgres server when one can be had (else those tests skip)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from proofgym.traces import TraceStore

POSTGRES_URL_ENV = "PROOFGYM_TEST_POSTGRES_URL"


@pytest.fixture
def store(tmp_path):
    """An empty SQLite store with one run, ``run-1``."""
    with TraceStore(tmp_path / "traces.db") as store:
        store.start_run("run-1", kind="eval", env_name="grant_eligibility")
        yield store


def _postgres_bin() -> Path | None:
    for name in ("initdb", "pg_ctl"):
        found = shutil.which(name)
        if found is None:
            break
    else:
        return Path(shutil.which("pg_ctl")).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    """A Postgres URL: ``$PROOFGYM_TEST_POSTGRES_URL``, else a throwaway local cluster, else skip."""
    pytest.importorskip("psycopg", reason="Postgres tests need the psycopg driver (pip install 'psycopg[binary]')")
    if os.environ.get(POSTGRES_URL_ENV):
        yield os.environ[POSTGRES_URL_ENV]
        return
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip(f"no Postgres server: set {POSTGRES_URL_ENV} or install PostgreSQL "
                    "(scripts/system_packages.sh postgres)")
    prefix: list[str] = []
    owner = None
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        user = next((u for u in ("postgres", "nobody") if _user_exists(u)), None)
        if user is None or shutil.which("runuser") is None:
            pytest.skip("running as root, and no 'postgres' user or no runuser to start Postgres as")
        prefix, owner = ["runuser", "-u", user, "--"], user
    datadir = Path(tempfile.mkdtemp(prefix="proofgym-pg-"))
    if owner is not None:
        shutil.chown(datadir, owner)
    port = _free_port()
    log = datadir / "server.log"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=60)

    try:
        init = run(str(bindir / "initdb"), "-D", str(datadir / "data"), "-U", "postgres", "--auth=trust",
                   "--no-sync", "-E", "UTF8")
        if init.returncode != 0:
            pytest.skip(f"initdb failed: {init.stderr.strip()[-500:]}")
        options = (f"-p {port} -k {datadir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        start = run(str(bindir / "pg_ctl"), "-D", str(datadir / "data"), "-o", options, "-l", str(log), "-w",
                    "-t", "30", "start")
        if start.returncode != 0:
            tail = log.read_text()[-500:] if log.exists() else start.stderr
            pytest.skip(f"Postgres did not start: {tail.strip()}")
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(datadir / "data"), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(datadir, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@pytest.fixture
def postgres_url(postgres_server):
    """A URL whose tables live in a fresh Postgres schema, dropped after the test."""
    import psycopg

    base = postgres_server.replace("postgresql+psycopg://", "postgresql://", 1)
    name = f"proofgym_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in postgres_server else "?"
    try:
        yield f"{postgres_server}{separator}options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")
