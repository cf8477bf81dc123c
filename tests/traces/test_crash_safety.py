"""A writer SIGKILLed mid-run leaves only complete sessions, an intact database, and no gap in what it committed;
readers never see a session half-written."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from proofgym.traces import TraceStore

from ._support import make_session

WRITER = Path(__file__).with_name("_crash_writer.py")


def run_and_kill(db: Path, run_id: str, first: int, at_least: int) -> None:
    child = subprocess.Popen([sys.executable, str(WRITER), str(db), run_id, str(first)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        deadline = time.monotonic() + 60
        with TraceStore(db, create=False) as reader:
            while reader.count_sessions(run_id=run_id) < at_least:
                assert child.poll() is None, child.stderr.read()
                assert time.monotonic() < deadline, "the writer committed too little in 60 s"
                time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()


def test_sigkill_mid_run_loses_nothing_committed_and_leaves_no_half_session(tmp_path):
    db = tmp_path / "crash.db"
    run_and_kill(db, "crash-a", 0, at_least=40)
    run_and_kill(db, "crash-b", 100_000, at_least=40)  # a store that survived a kill opens and writes again

    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []  # no child row without its session
        mismatched = raw.execute("SELECT session_id FROM sessions s WHERE n_steps != "
                                 "(SELECT count(*) FROM steps WHERE steps.session_id = s.session_id)").fetchall()
        assert mismatched == []
    with TraceStore(db, create=False) as store:
        for run_id, first in (("crash-a", 0), ("crash-b", 100_000)):
            stored = [s.session_id for s in store.list_sessions(run_id=run_id)]
            assert len(stored) >= 40
            # one worker commits batches in submission order: what is there is an unbroken prefix
            assert stored == [f"c{i:06d}" for i in range(first, first + len(stored))]
            for session in store.iter_sessions(run_id=run_id):
                assert session == make_session(int(session.session_id[1:]), run_id, prefix="c")


def test_readers_see_sessions_whole_while_a_writer_commits(store):
    done = threading.Event()
    seen, problems = set(), []

    def read():
        while not done.is_set():
            for summary in store.list_sessions():
                session = store.get_session(summary.session_id)
                if session is None or len(session.steps) != summary.n_steps or session != make_session(
                        int(summary.session_id[1:])):
                    problems.append(summary.session_id)
                seen.add(summary.session_id)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for start in range(0, 150, 10):
            store.write_sessions([make_session(i) for i in range(start, start + 10)])
    finally:
        done.set()
        reader.join()
    assert problems == [] and len(seen) > 0
