"""The reference's two Crafter eval files run with ``proofgym eval`` as written, only their URLs pointed here: a real
``proofgym serve crafter`` (letting requests set ``env_params``, which the files send) and a scripted
OpenAI-compatible model server; the summary prints the achievement table. Read from the seed diff at test time."""

from __future__ import annotations

import json

import pytest
# key: that test's autouse fixture (ENVIRONMENT_API_KEY set to KEY, the other key variables cleared), used here too
from evaluation.test_the_reference_eval_files_run_as_written import KEY, key, pointed_here, reference_file  # noqa: F401
from taskapp._support import ScriptedModelServer, TaskAppProcess
from typer.testing import CliRunner

from proofgym.cli import app

pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")
runner = CliRunner()
# Three decisions of four actions: the files' 10-step episodes end on the step limit.
MOVES = [{"tool": "interact_many", "args": {"actions": ["move_left", "do", "move_up", "do"]}}] * 10


@pytest.fixture(scope="module")
def task_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("crafter-app") / "app.db"
    with TaskAppProcess("crafter", "--allow-env-override", "env_params", traces=traces, api_key=KEY) as served:
        yield served


@pytest.mark.parametrize("name", ["crafter_eval_synth_qwen4b.toml", "crafter_eval_text_only_groq_qwen32b.toml"])
def test_a_reference_crafter_eval_file_runs_every_seed_and_prints_the_achievements(name, task_app, tmp_path,
                                                                                   monkeypatch):
    original = reference_file(name)
    assert "env_params = {max_steps_per_episode = 10}" in original and "use_vision = false" in original
    monkeypatch.chdir(tmp_path)
    with ScriptedModelServer(MOVES) as model:
        config = tmp_path / name
        config.write_text(pointed_here(original, task_app_url=task_app.url,
                                       inference_url=model.url + "/chat/completions"))
        out = tmp_path / "report.json"
        result = runner.invoke(app, ["eval", "--config", str(config), "--json-out", str(out)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "'crafter-react' is not a proofgym policy; using 'openai'" in output
    assert "achievements over 3 episodes" in output and "collect_wood" in output and "score " in output
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["results"]] == ["ok"] * 3
    assert all(r["num_steps"] == 3 for r in report["results"])  # 4 + 4 + 2 crafter steps: the step limit
    found = report["summary"]["achievements"]
    assert found["episodes"] == 3 and found["achievements"] == 22 and len(found["success_rates"]) == 22
