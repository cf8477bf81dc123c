import asyncio
import math

import pytest

from proofgym.taskapp._recorder import TraceRecorder
from proofgym.traces import SessionTrace, StepTrace, TraceStore, TraceStoreError


def session(i, run_id="run-a", reward=1.0):
    return SessionTrace(session_id=f"s{i}", run_id=run_id, env_name="loan", seed=i, started_at=float(i),
                        ended_at=float(i) + 1, steps=[StepTrace(index=0, observation={"text": "o"}, reward=reward,
                                                                done=True)])


def test_concurrent_records_all_commit_and_runs_are_created_once_and_finished(tmp_path):
    path = tmp_path / "t.db"

    async def main():
        recorder = TraceRecorder(path, env_name="loan", run_config={"x": 1})
        await recorder.open()
        await asyncio.gather(*(recorder.record(session(i, run_id=f"run-{i % 3}")) for i in range(40)))
        with TraceStore(path, create=False) as reader:  # committed before record() returned
            assert reader.count_sessions() == 40
        await recorder.close()

    asyncio.run(main())
    with TraceStore(path, create=False) as store:
        runs = {run.run_id: run for run in store.list_runs()}
        assert sorted(runs) == ["run-0", "run-1", "run-2"]
        assert all(run.status == "ok" and run.kind == "serve" and run.config == {"x": 1} for run in runs.values())
        assert sum(run.summary["ok"] for run in runs.values()) == 40
        assert runs["run-0"].summary == {"sessions": 14, "ok": 14, "failed": 0}


def test_a_session_that_cannot_be_stored_fails_only_its_own_record(tmp_path):
    async def main():
        recorder = TraceRecorder(tmp_path / "t.db", env_name="loan", run_config={})
        await recorder.open()
        results = await asyncio.gather(*(recorder.record(session(i, reward=math.nan if i == 3 else 1.0))
                                         for i in range(8)), return_exceptions=True)
        await recorder.close()
        return results

    results = asyncio.run(main())
    assert [i for i, r in enumerate(results) if r is not None] == [3]
    assert isinstance(results[3], TraceStoreError) and "s3" in str(results[3])


def test_a_run_started_by_an_earlier_app_is_joined_not_finished(tmp_path):
    path = tmp_path / "t.db"
    with TraceStore(path) as store:
        store.start_run("trainer-run", kind="train")

    async def main():
        recorder = TraceRecorder(path, env_name="loan", run_config={})
        await recorder.open()
        await recorder.record(session(1, run_id="trainer-run"))
        await recorder.close()

    asyncio.run(main())
    with TraceStore(path, create=False) as store:
        [run] = store.list_runs()
        assert run.kind == "train" and run.status == "running" and store.count_sessions(run_id="trainer-run") == 1


def test_a_borrowed_store_is_left_open(tmp_path):
    store = TraceStore(tmp_path / "t.db")

    async def main():
        recorder = TraceRecorder(store, env_name="loan", run_config={})
        await recorder.open()
        await recorder.record(session(1))
        await recorder.close()

    asyncio.run(main())
    assert store.count_sessions() == 1
    store.close()


def test_recording_before_open_is_an_error(tmp_path):
    recorder = TraceRecorder(tmp_path / "t.db", env_name="loan", run_config={})
    with pytest.raises(TraceStoreError, match="not open"):
        asyncio.run(recorder.record(session(1)))
