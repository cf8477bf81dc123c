"""A tiny RL config for the loop's tests: proofgym:tiny on fact_finding through a local task app, cheap settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from proofgym.training.rl import parse_rl_config


def tiny_data(**overrides: dict[str, Any]) -> dict[str, Any]:
    """The tiny config as a dict, each section in ``overrides`` updated with its keys."""
    data: dict[str, Any] = {
        "algorithm": {"variety": "grpo"},
        "services": {"task_url": "local:fact_finding"},
        "model": {"base": "proofgym:tiny", "trainer_mode": "full"},
        "rollout": {"env_name": "fact_finding", "max_turns": 3, "max_concurrent_rollouts": 8,
                    "policy_config": {"temperature": 1.0, "max_tokens": 6}},
        "evaluation": {"instances": 2, "every_n_iters": 100, "seeds": [0, 1]},
        "training": {"iterations_per_epoch": 2, "batch_size": 2, "group_size": 2, "learning_rate": 3e-4,
                     "warmup_steps": 2, "checkpoint_every": 1},
        "rubric": {"enabled": True, "set": "fact_finding", "weights": {"env": 0.0, "event": 0.2, "outcome": 1.0}},
    }
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    return data


def tiny_config(output_dir: Path, **overrides: dict[str, Any]) -> Any:
    data = tiny_data(**overrides)
    data["training"]["output_dir"] = str(output_dir)
    return parse_rl_config(data)


def tiny_toml(**overrides: dict[str, Any]) -> str:
    """``tiny_data(**overrides)`` as an rl.toml (``kind = "rl"``), for the command line."""
    lines = ['kind = "rl"']

    def table(name: str, values: dict[str, Any]) -> None:
        lines.append(f"[{name}]")
        nested = {key: value for key, value in values.items() if isinstance(value, dict)}
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in values.items() if key not in nested)
        for key, value in nested.items():
            table(f"{name}.{key}", value)

    for section, values in tiny_data(**overrides).items():
        table(section, values)
    return "\n".join(lines) + "\n"


#: ``tiny_config`` as an rl.toml with one iteration, for the command line (its ``output_dir`` given with
#: ``--output-dir``).
TINY_TOML = tiny_toml(training={"iterations_per_epoch": 1})


def train(config: Path, output: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``proofgym train --config CONFIG --output-dir OUTPUT ARGS`` in a child process."""
    return subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "train", "--config",
                           str(config), "--output-dir", str(output), *args],
                          capture_output=True, text=True, timeout=900)
