"""A tiny RL config for the loop's tests: proofgym:tiny on fact_finding through a local task app, cheap settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from proofgym.training.rl import parse_rl_config


def tiny_config(output_dir: Path, **overrides: dict[str, Any]) -> Any:
    data: dict[str, Any] = {
        "algorithm": {"variety": "grpo"},
        "services": {"task_url": "local:fact_finding"},
        "model": {"base": "proofgym:tiny", "trainer_mode": "full"},
        "rollout": {"env_name": "fact_finding", "max_turns": 3, "max_concurrent_rollouts": 8,
                    "policy_config": {"temperature": 1.0, "max_tokens": 6}},
        "evaluation": {"instances": 2, "every_n_iters": 100, "seeds": [0, 1]},
        "training": {"iterations_per_epoch": 2, "batch_size": 2, "group_size": 2, "learning_rate": 3e-4,
                     "warmup_steps": 2, "checkpoint_every": 1, "output_dir": str(output_dir)},
        "rubric": {"enabled": True, "set": "fact_finding", "weights": {"env": 0.0, "event": 0.2, "outcome": 1.0}},
    }
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    return parse_rl_config(data)


#: ``tiny_config`` as an rl.toml, for the command line (its ``output_dir`` given with ``--output-dir``).
TINY_TOML = """\
[services]
task_url = "local:fact_finding"
[model]
base = "proofgym:tiny"
trainer_mode = "full"
[rollout]
env_name = "fact_finding"
max_turns = 3
max_concurrent_rollouts = 8
[rollout.policy_config]
temperature = 1.0
max_tokens = 6
[evaluation]
instances = 2
every_n_iters = 100
seeds = [0, 1]
[training]
iterations_per_epoch = 1
batch_size = 2
group_size = 2
learning_rate = 3e-4
warmup_steps = 2
checkpoint_every = 1
[rubric]
enabled = true
set = "fact_finding"
[rubric.weights]
env = 0.0
event = 0.2
outcome = 1.0
"""


def train(config: Path, output: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``proofgym train --config CONFIG --output-dir OUTPUT ARGS`` in a child process."""
    return subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "train", "--config",
                           str(config), "--output-dir", str(output), *args],
                          capture_output=True, text=True, timeout=900)
