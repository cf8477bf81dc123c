"""The reference's own eval files run with ``proofgym eval`` as written, only their URLs pointed here: a real
``proofgym serve verilog`` and a fake OpenAI-compatible model server. Read from the seed diff at test time (never
copied into the repository); skipped where it is absent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _judge import requires_judge
from taskapp._support import SUBMIT, ScriptedModelServer, TaskAppProcess, only_environment_api_key, write_file
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.traces import TraceStore
from proofgym.verilog import builtin_problems, problem_difficulty

SEED_DIFF = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "synth-ai-0.2.14-diff.txt"
CONFIGS = "examples/multi_step/configs/"
KEY = "reference-eval-key"
runner = CliRunner()


def reference_file(name: str) -> str:
    """The text of the file ``name`` the seed diff adds (its ``+`` lines), or a skip when the diff is absent."""
    if not SEED_DIFF.is_file():
        pytest.skip(f"the reference's seed diff is not at {SEED_DIFF}")
    lines = SEED_DIFF.read_text(encoding="utf-8").splitlines()
    start = lines.index(CONFIGS + name)
    hunk = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("@@ -0,0 "))
    body = []
    for line in lines[hunk + 1:]:
        if not line.startswith("+"):
            break
        body.append(line[1:])
    return "\n".join(body) + "\n"


def pointed_here(text: str, *, task_app_url: str, inference_url: str) -> str:
    """``text`` with only its task app and inference URLs replaced."""
    for key, url in (("task_app_url", task_app_url), ("inference_url", inference_url)):
        text, count = re.subn(rf'^({key}\s*=\s*)"[^"]*"', lambda m, url=url: f'{m.group(1)}"{url}"', text,
                              flags=re.M)
        assert count == 1, f"{key} is not in the file once"
    return text


@pytest.fixture(autouse=True)
def key(monkeypatch):
    only_environment_api_key(monkeypatch, KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")


@pytest.fixture(scope="module")
def task_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("reference-app") / "app.db"
    with TaskAppProcess("verilog", traces=traces, api_key=KEY) as served:
        yield served


def test_the_seed_file_is_read_from_the_diff():
    text = reference_file("verilog_eval_groq_qwen32b.toml")
    assert text.startswith("# Verilog Eval Config for Groq Qwen3-32B")
    assert 'difficulty = "medium"' in text and "[eval.judge]" in text


@requires_judge
@pytest.mark.parametrize("name", ["verilog_eval_groq_qwen32b.toml", "verilog_eval_synth_qwen8b.toml"])
def test_a_reference_verilog_eval_file_runs_every_seed_on_the_difficulty_it_asks_for(name, task_app, tmp_path,
                                                                                     monkeypatch):
    original = reference_file(name)
    monkeypatch.chdir(tmp_path)  # the file names no trace store: the default, traces/proofgym.db, is made here
    # The model writes a design and submits it: every rollout runs to its end (it need not pass).
    with ScriptedModelServer([write_file("module TopModule(input a, output b);\n  assign b = a;\nendmodule\n"),
                              SUBMIT]) as model:
        text = pointed_here(original, task_app_url=task_app.url, inference_url=model.url + "/chat/completions")
        config = tmp_path / name
        config.write_text(text)
        out = tmp_path / "report.json"
        result = runner.invoke(app, ["eval", "--config", str(config), "--json-out", str(out)])
    assert result.exit_code == 0, result.output
    # Its judge (the old [eval.judge], read as [evaluation.judge]) is Python code of the reference's repository, not
    # here: named, left out, the rollouts run.
    assert "evaluation.judge: cannot load the judge: no file at 'examples/multi_step/judges/verilog_backend_judge.py'" \
        in " ".join(result.output.split())
    assert "judge Backend (outcome total): not run" in " ".join(result.output.split())
    assert "'verilog-designer' is not a proofgym policy; using 'openai'" in result.output
    report = json.loads(out.read_text())
    seeds = report["results"]
    assert [r["seed"] for r in seeds] == [0, 1, 2] and all(r["status"] == "ok" for r in seeds), seeds
    # The difficulty reached the environment: every task is one of the medium problems.
    medium = sorted(p.id for p in builtin_problems().values() if problem_difficulty(p) == "medium")
    assert [r["task_id"] for r in seeds] == medium[:3]
    with TraceStore(task_app.traces, create=False) as store:
        sessions = store.list_sessions(run_id=report["run_id"])
        assert len(sessions) == 3
        first = store.get_session(sessions[0].session_id)
    assert json.dumps(first.to_dict()).count('"difficulty": "medium"') >= 1
    assert (tmp_path / "traces" / "proofgym.db").is_file()  # the eval's own copy of the traces
