"""Failures never become zeros: erroring rollouts leave their group, a judge outage aborts past the error budget,
a task-app restart is survived, SIGTERM checkpoints and the run resumes."""

from __future__ import annotations

import csv
import os
import signal

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.training.rl import RLError, RLTrainer  # noqa: E402
from proofgym.training.rl import _task_app  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._run import tiny_config  # noqa: E402


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    """Iteration 1: every rollout of the first seed errors. After iteration 1 the task app is killed (the next
    rollouts find it gone); after iteration 2 the run gets SIGTERM."""
    output = tmp_path_factory.mktemp("rl") / "faults"
    original = _task_app.RolloutClient._rollout
    state = {"iteration": 0, "first_seed": None}

    async def flaky(self, body, seed, cid):
        if state["iteration"] == 0 and body.get("mode") == "rl":
            state["first_seed"] = state["first_seed"] if state["first_seed"] is not None else seed
            if seed == state["first_seed"]:
                return _task_app.Rollout(seed, cid, error="injected: the rollout errored")
        return await original(self, body, seed, cid)

    trainer = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 5, "max_error_share": 0.6}))

    def on_row(row):
        state["iteration"] = row["step"]
        if row["step"] == 1:
            trainer.app.process.kill()
            trainer.app.process.wait()
        elif row["step"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    trainer.on_row = on_row
    _task_app.RolloutClient._rollout = flaky
    try:
        result = trainer.run()
    finally:
        _task_app.RolloutClient._rollout = original
    return output, trainer, result


def test_erroring_rollouts_leave_their_group_and_are_counted(faulty_run):
    _, trainer, _ = faulty_run
    first = trainer.metrics.rows[0]
    assert first["invalid"] == 2 and first["valid"] == 2
    assert first["skipped_groups"] == 1  # the errored seed's group had no valid rollout: no zeros trained on


def test_a_task_app_restart_is_survived(faulty_run):
    _, trainer, _ = faulty_run
    assert trainer.app.restarts == 1  # rollouts that failed together restarted it once
    assert trainer.app.process.poll() is not None  # and the run's end stopped the restarted app
    assert trainer.metrics.rows[1]["valid"] == 4


def test_sigterm_checkpoints_and_the_run_resumes(faulty_run):
    output, _, result = faulty_run
    assert result.stopped_by_signal and result.stopped_by == "SIGTERM" and result.iterations == 2
    # The task app was killed mid-run: the run is the trainer's to end, and it ended as stopped.
    with TraceStore(output / "traces.db") as store:
        assert [(run.run_id, run.kind, run.status) for run in store.list_runs(counts=False)] == \
            [("faults", "rl", "cancelled")]
    notes: list[str] = []
    resumed = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 3}), on_note=notes.append).run()
    assert any("resumed from" in n and "iteration 2" in n for n in notes)
    assert resumed.iterations == 3
    assert [int(r["step"]) for r in csv.DictReader(resumed.metrics_csv.open())] == [1, 2, 3]


def test_a_judge_outage_aborts_past_the_error_budget(tmp_path):
    """An LLM criterion asked of a judge that is down abstains: every rollout is judged invalid (never 0) and the
    run stops with the budget named."""
    config = tiny_config(
        tmp_path / "outage", training={"max_error_share": 0.25, "warmup_steps": 0},
        services={"judge_url": "http://127.0.0.1:9/v1"},
        rubric={"set": None, "model": "judge-model",
                "outcome": {"criteria": [{"id": "quality", "weight": 1.0, "description": "Is it good?"}]}})
    with pytest.raises(RLError, match="max_error_share"):
        RLTrainer(config).run()
