"""The example plugin (examples/plugin, installed by ``make setup``) adds a verifier kind and an environment
through entry points alone, and proofgym uses both without a file of its own changed: in a run config, over
HTTP with ``proofgym serve``, and in ``proofgym eval``."""

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from proofgym.config import parse_run_config
from proofgym.envs import env_names
from proofgym.verifiers import verifier_kinds

ROOT = Path(__file__).resolve().parents[2]


def test_the_plugin_is_installed_and_registered_by_entry_points_only():
    try:
        dist = metadata.distribution("proofgym-parity")
    except metadata.PackageNotFoundError:
        pytest.fail("the example plugin is not installed: run `make setup` (pip install -e examples/plugin)")
    groups = {(point.group, point.name) for point in dist.entry_points}
    assert {("proofgym.verifiers", "parity"), ("proofgym.envs", "parity")} <= groups
    assert "parity" in verifier_kinds() and "parity" in env_names()
    # proofgym itself never names the plugin
    assert subprocess.run(["git", "grep", "-l", "proofgym_parity", "--", "src"], cwd=ROOT,
                          capture_output=True, text=True).stdout == ""


def test_a_run_config_uses_the_plugins_verifier_kind():
    config = parse_run_config({"parser": {"kind": "json_block", "decisions": ["even", "odd"], "require_facts": True},
                               "verifier": {"kind": "parity", "max_abs": 100}})
    fn = config.reward_function()
    right, wrong, past = (f'<decision>{{"facts": {{"n": {n}}}, "classification": "{d}"}}</decision>'
                          for n, d in ((7, "odd"), (7, "even"), (1000, "even")))
    refs = [{"gold": "odd", "source_facts": {"n": 7}}] * 2 + [{"gold": "even", "source_facts": {"n": 1000}}]
    items = fn.score(["Is 7 even or odd?"] * 2 + ["Is 1000 even or odd?"], [right, wrong, past], refs)
    assert [item.outcome for item in items] == ["certified", "refuted", "refuted"]
    assert items[0].reward > items[1].reward
    fn.close()


def test_a_run_config_validates_the_plugins_options_where_the_kind_is_defined(tmp_path):
    from proofgym.config import ConfigError, load_run_config

    path = tmp_path / "parity.yaml"
    path.write_text("verifier:\n  kind: parity\n  max_abs: zero\n")
    with pytest.raises(ConfigError, match=r"parity.yaml: verifier.max_abs: Input should be a valid integer"):
        load_run_config(path)


def test_proofgym_serve_serves_the_plugins_environment(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "taskapp"))
    try:
        from _support import TaskAppProcess
    finally:
        sys.path.pop(0)
    with TaskAppProcess("parity", traces=tmp_path / "traces.db") as app:
        headers = {"X-API-Key": app.api_key}
        for seed in (0, 1, 2):
            body = {"run_id": "plugin", "env": {"seed": seed}, "policy": {"policy_name": "oracle", "config": {}}}
            reply = httpx.post(app.url + "/rollout", json=body, headers=headers, timeout=60)
            assert reply.status_code == 200, reply.text
            metrics = reply.json()["metrics"]
            assert metrics["outcome_score"] == 1.0 and metrics["episode_returns"] == [pytest.approx(1.9)]
        wrong = {"run_id": "plugin", "env": {"seed": 0},
                 "policy": {"policy_name": "scripted", "config": {"actions": ["not an answer"]}}}
        reply = httpx.post(app.url + "/rollout", json=wrong, headers=headers, timeout=60)
        assert reply.status_code == 200 and reply.json()["metrics"]["outcome_score"] == 0.0


def test_proofgym_eval_runs_the_plugins_environment(tmp_path):
    config = tmp_path / "eval_parity.toml"
    config.write_text('[evaluation]\napp_id = "parity-oracle"\nenv_name = "parity"\npolicy_name = "oracle"\n'
                      f'seeds = "0-7"\nconcurrency = 4\ntraces = {json.dumps(str(tmp_path / "eval.db"))}\n'
                      '[evaluation.env_config]\nmax_value = 50\n')
    run = subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "eval", "--config",
                          str(config)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 rollouts: 8 passed, 0 not passed, 0 invalid (not judged), 0 failed to run" in run.stdout, run.stdout
