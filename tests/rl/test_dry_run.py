"""``proofgym train --config rl.toml --dry-run`` for both shipped RL configs: every service started, one batch rolled
out and judged, no update."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the RL trainer needs torch (pip install -e '.[train]')")
pytest.importorskip("transformers", reason="the RL trainer needs transformers (pip install -e '.[train]')")

CONFIGS = Path(__file__).parents[2] / "configs"


def _dry_run(config: Path, output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "train", "--config",
                           str(config), "--dry-run", "--output-dir", str(output)],
                          capture_output=True, text=True, timeout=900)


def test_tiny_config_dry_run(tmp_path):
    done = _dry_run(CONFIGS / "rl_fact_finding_tiny.toml", tmp_path / "run")
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
    done = _dry_run(CONFIGS / "rl_verilog_qwen_gpu.toml", tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded, no effect on this machine: compute.gpu_count" in done.stdout


def test_a_bad_config_fails_with_the_key_named(tmp_path):
    bad = tmp_path / "rl.toml"
    bad.write_text((CONFIGS / "rl_fact_finding_tiny.toml").read_text().replace("group_size = 16", "group_sise = 16"))
    done = _dry_run(bad, tmp_path / "run")
    assert done.returncode != 0
    assert "training.group_sise" in done.stdout + done.stderr
