import json
import re

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from proofgym.cli import app  # noqa: E402

runner = CliRunner()


@pytest.mark.slow
def test_quick_demo_runs_every_phase_and_writes_its_outputs(tmp_path):
    out, cache = tmp_path / "demo", tmp_path / "cache"
    result = runner.invoke(app, ["demo", "--quick", "--out", str(out), "--seed", "1", "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output
    assert "held-out decision accuracy per rule branch" in result.output
    assert "PASSED" in result.output or "NOT REACHED" in result.output
    # PASSED counts decisions: the certified share stands beside it.
    assert re.search(r"(PASSED|NOT REACHED) \(decisions [0-9.]+% right; certified [0-9.]+% of held-out answers",
                     " ".join(result.output.split()))
    for label in ("minors", "income over threshold", "non-residents", "active grants", "permits"):
        assert label in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 1 and summary["steps"] == 3
    assert set(summary["heldout"]) == {"untrained", "warmed_up", "trained"}
    timings = summary["timings"]  # each phase's wall and CPU seconds (the process's, trace writer included)
    for phase in ("setup_s", "eval_s", "warmup_s", "grpo_s"):
        assert timings[phase] > 0 and timings[f"{phase}_cpu"] > 0
    assert 0 < timings["trace_writer_cpu_s"] < timings["total_cpu_s"]
    assert (out / "metrics.csv").read_text().count("\n") == 5  # header, step 0 (after warm-up), one row per step
    assert (out / "reward_curve.png").stat().st_size > 0
    assert (out / "policy" / "config.json").is_file()
    assert any(cache.iterdir())  # the model was built into the cache folder given

    from proofgym.traces import TraceStore

    with TraceStore(out / "traces.db", create=False) as store:
        [run] = [r for r in store.list_runs() if r.run_id == summary["run_id"]]
        assert run.kind == "demo" and run.status == "ok" and run.summary["passed"] == summary["passed"]
        sessions = store.list_sessions(run_id=run.run_id)
        assert len(sessions) == run.n_sessions >= 3 * 4 * 8  # every rollout of every step
        session = store.get_session(sessions[0].session_id)
        step = session.steps[0]
        assert step.observation.startswith("Grant application: age ") and isinstance(step.action, str)
        assert step.info["outcome"] in {"certified", "refuted", "format_error", "invalid"}
        assert {"gold", "branch", "components", "advantage"} <= set(step.info)


@pytest.mark.slow
def test_an_unwritable_output_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = runner.invoke(app, ["demo", "--quick", "--out", str(blocker / "demo"), "--cache-dir",
                                 str(tmp_path / "cache")])
    assert result.exit_code == 2 and "error" in result.output


def test_the_help_states_the_goal_and_the_stop_rule_the_run_prints():
    from proofgym.training import DEMO_GOAL_RULE, DEMO_STOP_RULE

    result = runner.invoke(app, ["demo", "--help"], terminal_width=200)
    text = " ".join(result.output.split())
    assert result.exit_code == 0
    assert DEMO_GOAL_RULE in text and DEMO_STOP_RULE in text
    assert "98.5%" in DEMO_STOP_RULE and "two held-out evaluations in a row" in DEMO_STOP_RULE
