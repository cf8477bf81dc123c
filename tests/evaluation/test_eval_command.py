import json
from pathlib import Path

import pytest
from _judge import requires_judge
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.traces import TraceStore

from ._support import write_eval_toml

runner = CliRunner()
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def run(config, *args):
    return runner.invoke(app, ["eval", "--config", str(config), *args])


@pytest.mark.parametrize("name, seeds", [("grant.toml", 32),
                                         pytest.param("verilog.toml", 8, marks=requires_judge)])
def test_the_shipped_eval_configs_run_offline_and_pass(tmp_path, monkeypatch, name, seeds):
    monkeypatch.chdir(tmp_path)  # the configs store traces under ./traces
    result = run(CONFIGS / "eval" / name, "--json-out", "out/summary.json")
    assert result.exit_code == 0, result.output
    assert result.output.count("seed ") == seeds
    assert "pass rate" in result.output and "100.0%" in result.output
    report = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert report["summary"]["ok"] == seeds and report["summary"]["pass_rate"] == 1.0
    assert report["mode"] == "in-process" and len(report["results"]) == seeds
    with TraceStore(tmp_path / "traces" / "eval.db", create=False) as store:
        [run_summary] = store.list_runs()
        assert run_summary.kind == "eval" and run_summary.status == "ok" and run_summary.n_sessions == seeds
        assert run_summary.summary["pass_rate"] == 1.0


def test_wrong_answers_are_scored_not_failed(tmp_path):
    wrong = "<reasoning>x</reasoning>\n<decision>{\"classification\": \"permit\", \"facts\": {}}</decision>"
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "grant_eligibility", "policy_name": "scripted",
                                                   "seeds": "0-3", "traces": str(tmp_path / "t.db")},
                             policy_config={"actions": [wrong]})
    result = run(config, "--json-out", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())["summary"]
    assert summary["ok"] == 4 and summary["pass_rate"] == 0.0 and summary["mean_outcome"] == 0.0


def test_failed_rollouts_exit_1(tmp_path):
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "grant_eligibility", "seeds": [0, 1],
                                                   "traces": str(tmp_path / "t.db")},
                             policy_config={"provider": "vllm", "model": "m", "inference_url": "http://127.0.0.1:9/v1",
                                            "max_retries": 0})
    result = run(config, "--json-out", str(tmp_path / "s.json"))
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["summary"]["failed"] == 2 and all(r["status"] == "error" for r in report["results"])
    with TraceStore(tmp_path / "t.db", create=False) as store:
        assert store.count_sessions(status="error") == 2 and store.list_runs()[0].status == "error"


def test_max_turns_is_honoured_in_process(tmp_path):
    actions = [{"tool": "write_file", "args": {"path": "top.v", "content": "module TopModule; endmodule"}}] * 5
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "verilog", "policy_name": "scripted", "seeds": [0],
                                                   "max_turns": 2, "traces": str(tmp_path / "t.db")},
                             policy_config={"actions": actions})
    result = run(config, "--json-out", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    [seed] = json.loads((tmp_path / "s.json").read_text())["results"]
    assert seed["num_steps"] == 2 and seed["outcome_score"] == 0.0


@pytest.mark.parametrize("keys, env_config, message", [
    ({"env_name": "chess"}, None, "evaluation.env_name: unknown environment 'chess'"),
    ({"seeds": "0-3", "concurrency": "many"}, None, "evaluation.concurrency"),
    ({"policy_name": "gpt"}, None, "evaluation.policy_name: unknown policy 'gpt'"),
    ({}, {"max_turn": 3}, "evaluation.env_config: environment 'loan': invalid config: max_turn: unknown key"),
    ({"traces": "/proc/no/such/dir/t.db"}, None,
     "evaluation.traces: cannot open the trace store '/proc/no/such/dir/t.db'"),
    ({"judge": {"model": "m", "judge_url": "http://127.0.0.1:9/v1", "api_key_env": "PROOFGYM_TEST_NO_SUCH_KEY"}},
     None, "evaluation.judge.api_key_env: the environment variable 'PROOFGYM_TEST_NO_SUCH_KEY' is not set"),
])
def test_config_errors_exit_2_naming_the_file_and_the_key(tmp_path, keys, env_config, message):
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "loan", "policy_name": "oracle", "seeds": [0],
                                                   "traces": str(tmp_path / "t.db"), **keys}, env_config=env_config)
    result = run(config)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {config}: {message}"), line
    assert not (tmp_path / "t.db").exists()


def test_an_invalid_env_config_exits_2(tmp_path):
    config = write_eval_toml(tmp_path / "e.toml", {"env_name": "verilog", "policy_name": "oracle", "seeds": [0],
                                                   "traces": str(tmp_path / "t.db")}, env_config={"max_turn": 3})
    result = run(config)
    assert result.exit_code == 2 and f"{config}: evaluation.env_config" in result.output
    assert not (tmp_path / "t.db").exists()


def test_a_missing_config_file_exits_2(tmp_path):
    result = run(tmp_path / "nope.toml")
    assert result.exit_code == 2 and "config file not found" in result.output
