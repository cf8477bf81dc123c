"""An RL run is one run of its trace store (kind ``rl``) and is marked ended however it ends: ``ok`` when its
iterations are done, ``cancelled`` on SIGINT / SIGTERM, ``error`` when it fails; a resume is a run of its own."""

from __future__ import annotations

import json
import os
import signal
import sqlite3

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

from proofgym.training.rl import RLError, RLTrainer  # noqa: E402

from ._run import tiny_config  # noqa: E402


def _runs(output):
    """``(run_id, kind, status, ended_at, config, summary)`` of every run in the run's trace store, as SQL reads."""
    with sqlite3.connect(output / "traces.db") as db:
        rows = db.execute("select run_id, kind, status, ended_at, config, summary from runs order by started_at")
        return [(run_id, kind, status, ended, json.loads(config), json.loads(summary) if summary else None)
                for run_id, kind, status, ended, config, summary in rows]


def _session_runs(output):
    with sqlite3.connect(output / "traces.db") as db:
        return dict(db.execute("select run_id, count(*) from sessions group by run_id").fetchall())


def test_proofgym_train_marks_its_run_finished(trained_seed_5):
    _, output, _ = trained_seed_5
    with sqlite3.connect(output / "traces.db") as db:
        assert [(status, ended is not None) for status, ended in db.execute("select status, ended_at from runs")] \
            == [("ok", True)]
    ((run_id, kind, _, _, _, summary),) = _runs(output)
    assert (run_id, kind) == ("run", "rl")
    assert summary == json.loads((output / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["iterations"] == 1 and summary["error"] is None
    assert summary["last_evaluation"]["when"] == "iteration 1" and summary["last_evaluation"]["n_seeds"] == 2
    # every session the task app stored (1 iteration x 2 seeds x 2 rollouts, 2 held-out before and after) is the run's
    assert _session_runs(output) == {"run": 2 * 2 + 2 + 2}


def test_a_resumed_run_is_a_run_of_its_own_and_ends_too(tmp_path):
    output = tmp_path / "run"
    RLTrainer(tiny_config(output, training={"iterations_per_epoch": 1})).run()
    result = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 2})).run()
    assert result.run_id == "run-2" and result.iterations == 2
    runs = _runs(output)
    assert [(run_id, kind, status) for run_id, kind, status, *_ in runs] == [("run", "rl", "ok"),
                                                                             ("run-2", "rl", "ok")]
    assert all(ended is not None for *_, ended, _, _ in runs)
    assert runs[0][4]["resumed_from"] is None and runs[1][4]["resumed_from"] == 1
    assert runs[1][5]["iterations"] == 2
    assert _session_runs(output) == {"run": 2 * 2 + 2 + 2, "run-2": 2 * 2 + 2}  # no "before" evaluation on a resume


def test_sigint_checkpoints_after_the_iteration_and_marks_the_run_cancelled(tmp_path):
    output = tmp_path / "run"
    notes: list[str] = []
    trainer = RLTrainer(tiny_config(output, training={"iterations_per_epoch": 4}), on_note=notes.append)
    trainer.on_row = lambda row: os.kill(os.getpid(), signal.SIGINT) if row["step"] == 1 else None
    result = trainer.run()
    assert result.stopped_by_signal and result.stopped_by == "SIGINT" and result.iterations == 1
    assert any(n.startswith("SIGINT: checkpointing after this iteration") for n in notes)
    assert json.loads((output / "checkpoint" / "state.json").read_text())["iteration"] == 1
    ((_, _, status, ended, _, summary),) = _runs(output)
    assert status == "cancelled" and ended is not None and summary["stopped_by"] == "SIGINT"


def test_a_failed_run_is_marked_error_with_its_error(tmp_path):
    """The judge is down: every rollout is judged invalid and the error budget stops the run."""
    output = tmp_path / "outage"
    config = tiny_config(
        output, training={"max_error_share": 0.25, "warmup_steps": 0},
        services={"judge_url": "http://127.0.0.1:9/v1"},
        rubric={"set": None, "model": "judge-model",
                "outcome": {"criteria": [{"id": "quality", "weight": 1.0, "description": "Is it good?"}]}})
    with pytest.raises(RLError, match="max_error_share"):
        RLTrainer(config).run()
    ((_, kind, status, ended, _, summary),) = _runs(output)
    assert (kind, status) == ("rl", "error") and ended is not None
    assert summary["error"].startswith("RLError: ") and "training.max_error_share = 0.25" in summary["error"]


def test_a_dry_run_is_marked_ended(tmp_path):
    output = tmp_path / "dry"
    result = RLTrainer(tiny_config(output)).run(dry_run=True)
    assert result.dry_run["trainable"] >= 1
    ((_, kind, status, ended, _, summary),) = _runs(output)
    assert (kind, status) == ("rl", "ok") and ended is not None
    assert summary["dry_run"]["rollouts"] == 2 and summary["iterations"] == 0
    assert not (output / "summary.json").exists()  # a dry run leaves the run's summary alone
