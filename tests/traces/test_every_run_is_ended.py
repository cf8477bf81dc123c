"""No producer leaves a run ``running``: ``TraceStore.ending_run`` ends it however its block ends, and the eval
runner, the demo and the judge command run inside it (the RL trainer ends its own: tests/training/rl)."""

import sqlite3

import pytest

from proofgym.evaluation import parse_eval_config, run_eval
from proofgym.traces import TraceStore


def _status(path, run_id):
    with sqlite3.connect(path) as db:
        return db.execute("select status, ended_at, summary from runs where run_id = ?", (run_id,)).fetchone()


@pytest.mark.parametrize(("raised", "status"), [(RuntimeError("boom"), "error"), (KeyboardInterrupt(), "cancelled")])
def test_a_block_that_raises_ends_its_run_and_the_exception_goes_on(tmp_path, raised, status):
    path = tmp_path / "t.db"
    with TraceStore(path) as store:
        run_id = store.start_run("r", kind="eval")
        with pytest.raises(type(raised)), store.ending_run(run_id):
            raise raised
    found, ended_at, summary = _status(path, "r")
    assert found == status and ended_at is not None and type(raised).__name__ in summary


def test_a_block_that_ends_normally_ends_its_run_ok_unless_it_ended_it_itself(tmp_path):
    path = tmp_path / "t.db"
    with TraceStore(path) as store:
        with store.ending_run(store.start_run("plain", kind="eval")):
            pass
        with store.ending_run(store.start_run("own", kind="eval")):
            store.finish_run("own", status="error", summary={"why": "its own"})
    assert _status(path, "plain")[0] == "ok"
    assert _status(path, "own")[0] == "error" and "its own" in _status(path, "own")[2]


def test_an_eval_that_fails_mid_run_is_ended_not_left_running(tmp_path):
    path = tmp_path / "t.db"
    section = parse_eval_config({"evaluation": {"env_name": "grant_eligibility", "policy_name": "oracle",
                                                "seeds": "0-3", "traces": str(path), "concurrency": 1}}).evaluation

    def fail(result):  # a reporting callback that raises after the first seed
        raise RuntimeError("the terminal went away")

    with pytest.raises(RuntimeError, match="terminal went away"):
        run_eval(section, on_result=fail)
    with TraceStore(path) as store:
        [run] = store.list_runs()
    assert run.status == "error" and run.ended_at is not None and "terminal went away" in run.summary["error"]
