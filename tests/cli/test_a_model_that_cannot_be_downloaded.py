"""A hub model that is neither in the local Hugging Face cache nor downloadable is one error line naming it and the
models that need no download, from every command that loads one: never five retries per file and a traceback.

Each command runs in a child process, as a user runs it, with an empty Hugging Face cache and a hub endpoint that
refuses connections (so the test needs no network and never downloads, wherever it runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from proofgym.formats import load_toml

ROOT = Path(__file__).resolve().parents[2]
MODEL = "Qwen/Qwen3-0.6B"
UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once


def proofgym(args: list[str], tmp_path: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_ENDPOINT=UNREACHABLE_HUB, **environment)
    return subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def rl_config(tmp_path: Path) -> str:
    text = (ROOT / "configs" / "rl" / "fact_finding_tiny.toml").read_text()
    base = load_toml(text)["model"]["base"]
    path = tmp_path / "rl.toml"
    path.write_text(text.replace(f'base = "{base}"', f'base = "{MODEL}"'))
    assert load_toml(path.read_text())["model"]["base"] == MODEL
    return str(path)


def trl_config(tmp_path: Path) -> str:
    data = yaml.safe_load((ROOT / "configs" / "run" / "train_grant_tiny.yaml").read_text())
    data["training"]["model"] = MODEL
    data["training"].pop("tiny_model", None)  # it shapes proofgym:tiny only
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def eval_config(tmp_path: Path) -> str:
    path = tmp_path / "eval.toml"
    path.write_text('kind = "eval"\n\n[evaluation]\nenv_name = "grant_eligibility"\npolicy_name = "hf"\nseeds = [0]\n'
                    f'traces = "t.db"\n\n[evaluation.policy_config]\nmodel = "{MODEL}"\n')
    return str(path)


COMMANDS = {
    "serve-model": lambda tmp_path: ["serve-model", MODEL, "--port", "0"],
    "RL train": lambda tmp_path: ["train", "--config", rl_config(tmp_path), "--dry-run", "--output-dir", "rl"],
    "TRL train": lambda tmp_path: ["train", "--config", trl_config(tmp_path), "--output-dir", "trl"],
    "eval with the hf policy": lambda tmp_path: ["eval", "--config", eval_config(tmp_path)],
}


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    everything = done.stdout + done.stderr
    assert "Traceback" not in everything and "Retrying" not in everything, everything
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


# Each command is a child process that imports torch and transformers (4-6 s): the RL trainer and serve-model run
# by default, every command under -m slow.
BY_DEFAULT = {"serve-model", "RL train"}


@pytest.mark.parametrize("command", [pytest.param(name, marks=() if name in BY_DEFAULT else pytest.mark.slow)
                                     for name in COMMANDS])
def test_a_model_the_hub_cannot_give_is_one_line_naming_it_and_the_offline_models(tmp_path, command):
    line = one_error_line(proofgym(COMMANDS[command](tmp_path), tmp_path))
    assert f"model '{MODEL}' is not in the local Hugging Face cache" in line, line
    assert f"the hub at {UNREACHABLE_HUB} cannot be reached" in line and "smollm2" in line, line


def test_with_hf_hub_offline_the_hub_is_not_asked(tmp_path):
    line = one_error_line(proofgym(COMMANDS["serve-model"](tmp_path), tmp_path, HF_HUB_OFFLINE="1"))
    assert f"model '{MODEL}' is not in the local Hugging Face cache" in line and "HF_HUB_OFFLINE is set" in line
    assert "smollm2" in line and "proofgym:tiny" in line
