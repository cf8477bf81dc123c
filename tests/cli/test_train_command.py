"""`proofgym train` and `proofgym serve-reward` on the command line."""

import csv
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.domains import build_dataset, get_domain, gold_completion

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_a_run_config_without_train_section_is_refused():
    result = runner.invoke(app, ["train", "--config", "configs/run/grant_eligibility.yaml"])
    assert result.exit_code == 2
    assert "has no training: section" in result.output


def test_train_picks_its_trainer_from_the_kind_not_the_file_type(tmp_path):
    """A TOML run config (kind = "run") goes to the TRL path, which asks for its training: section; without a kind
    a TOML file with no train section was taken for an RL config."""
    config = tmp_path / "run.toml"
    config.write_text('kind = "run"\n\n[verifier]\nkind = "rulebook"\ndomain = "loan"\n')
    result = runner.invoke(app, ["train", "--config", str(config)])
    assert result.exit_code == 2 and "has no training: section" in result.output


def test_an_old_run_config_without_kind_and_with_train_still_goes_to_trl(tmp_path):
    old = tmp_path / "old.yaml"
    text = (ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text()
    old.write_text(text.replace("kind: run\n", "").replace("\ntraining:\n", "\ntrain:\n"))
    result = runner.invoke(app, ["train", "--config", str(old), "--seed", "1"])
    assert result.exit_code == 2 and "--seed is for RL configs" in result.output


def test_seed_is_refused_for_a_yaml_run_config():
    result = runner.invoke(app, ["train", "--config", "configs/run/train_grant_tiny.yaml", "--seed", "1"])
    assert result.exit_code == 2 and "--seed is for RL configs" in result.output


def test_an_invalid_train_section_is_refused_with_the_key(tmp_path):
    data = yaml.safe_load((ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text())
    data["training"]["grpo"]["group_size"] = 1
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["train", "--config", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2 and "training.grpo.group_size" in result.output


def test_an_unknown_dataset_domain_is_refused_before_any_training(tmp_path):
    data = yaml.safe_load((ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text())
    data["training"]["dataset"].update(domain="astrology", prompt_format="record")
    data["training"]["dataset"].pop("contrast")  # the demo's pairs need its compact rows
    data["training"]["curriculum"] = None
    data["training"]["grpo"].pop("explore_temperature")  # it needs the curriculum
    data["training"]["warmup"] = None
    data["training"]["model_cache_dir"] = str(tmp_path / "tiny")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["train", "--config", str(tmp_path / "bad.yaml"), "--output-dir",
                                 str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"error: {tmp_path / 'bad.yaml'}: training.dataset.domain: unknown domain 'astrology'" in result.stderr


@pytest.mark.parametrize("declared", [True, False], ids=["kind rl", "an old file without kind"])
def test_an_rl_config_problem_found_when_the_run_starts_names_the_file_and_the_key(tmp_path, declared):
    text = (ROOT / "configs" / "rl" / "fact_finding_tiny.toml").read_text()
    assert 'task_url = "local:fact_finding"' in text and 'kind = "rl"\n' in text
    if not declared:  # the reference's RL TOML: told apart by its sections
        text = text.replace('kind = "rl"\n', "")
    config = tmp_path / "rl.toml"
    config.write_text(text.replace('task_url = "local:fact_finding"', 'task_url = "local:verilog"'))
    result = runner.invoke(app, ["train", "--config", str(config), "--dry-run", "--output-dir", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: {config}: services.task_url local:verilog and rollout.env_name "
                                          "'fact_finding' name different environments"]


def test_serve_reward_refuses_a_public_address_without_a_key(monkeypatch):
    monkeypatch.delenv("PROOFGYM_API_KEY", raising=False)
    monkeypatch.delenv("ENVIRONMENT_API_KEY", raising=False)
    result = runner.invoke(app, ["serve-reward", "--config", "configs/run/grant_eligibility.yaml", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "without an API key" in result.output


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_reward_answers_openrlhf_over_http_with_the_key_from_the_environment():
    port = _free_port()
    env = {**os.environ, "PROOFGYM_API_KEY": "k-123"}
    env.pop("ENVIRONMENT_API_KEY", None)
    server = subprocess.Popen([sys.executable, "-c", "from proofgym.cli import main; main()", "serve-reward",
                               "--config", "configs/run/grant_eligibility.yaml", "--port", str(port), "--log-level",
                               "warning"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert server.poll() is None, server.stdout.read().decode()
                assert time.monotonic() < deadline, "serve-reward did not start"
                time.sleep(0.1)
            domain = get_domain("grant_eligibility")
            rows = build_dataset(domain, seed=3, n=2)
            completions = [gold_completion(domain, record) for record in domain.generate(3, 2)]
            body = {"query": [r["prompt"] + c for r, c in zip(rows, completions)],
                    "prompts": [r["prompt"] for r in rows], "labels": [r["gold"] for r in rows]}
            assert client.post("/get_reward", json=body).status_code == 401
            reply = client.post("/get_reward", json=body, headers={"Authorization": "Bearer k-123"})
        assert reply.status_code == 200, reply.text
        assert reply.json()["scores"] == [1.0, 1.0]
    finally:
        server.terminate()
        server.wait(20)


@pytest.mark.slow
def test_train_on_the_tiny_config_writes_metrics_curve_checkpoint_and_heldout_table(tmp_path):
    data = yaml.safe_load((ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text())
    data["training"].update(model_cache_dir=str(tmp_path / "tiny"), heldout={"n": 16, "seed": 1, "every": 1},
                         warmup={"steps": 20, "batch_size": 32, "learning_rate": 0.001}, save_every=1)
    data["training"]["grpo"].update(batch_size=4, group_size=4, updates_per_generation=1)
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    result = runner.invoke(app, ["train", "--config", str(tmp_path / "run.yaml"), "--steps", "2",
                                 "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    assert "held-out greedy accuracy" in result.output and "permit" in result.output
    with (out / "metrics.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["step"] for row in rows] == ["1", "2"]
    assert {"reward", "certified", "correct", "format_ok", "kl", "step_time_s"} <= set(rows[0])
    assert (out / "reward_curve.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "final" / "config.json").is_file() and (out / "checkpoint-2").is_dir()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["heldout_before"]["n"] == 16 and summary["heldout_after"]["n"] == 16
    # Scored during training too (every step but the last, which is the evaluation after training).
    assert [entry["step"] for entry in summary["heldout_during"]] == [1] and not summary["stopped_early"]
    assert "held-out during training (step: all, worst branch): 1: " in result.output
    assert set(summary["heldout_after"]["per_branch"]) == {"active_grant", "income_over_threshold", "minor",
                                                           "non_resident", "permit"}
