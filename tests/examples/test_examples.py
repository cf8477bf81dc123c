"""Every runnable example in examples/ runs as a user would run it, from the repository root, and prints what its
docstring promises (the documentation site includes these files, so they are its code too)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every example file the docs include is one of these (tests/docs/test_code_blocks.py checks it).
EXAMPLES = ["examples/score_and_trl.py", "examples/eval_task_app.sh", "examples/judge_criterion.py",
            "examples/byod/walkthrough.sh", "examples/plugin/src/proofgym_parity/__init__.py"]


def _run(*command: str, timeout: int = 600, **extra_env: str) -> str:
    env = {**os.environ, **extra_env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "BIN": str(Path(sys.executable).parent)}
    done = subprocess.run(list(command), cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_score_and_trl_scores_then_trains_with_trls_own_grpo_trainer():
    pytest.importorskip("trl")
    out = _run(sys.executable, "examples/score_and_trl.py")
    certified, hedged = out.splitlines()[:2]
    assert certified.startswith("certified 2.1 ") and "'certified': 1.0" in certified
    assert hedged.startswith("format_error -1.0")
    assert re.search(r"^trained 2 GRPO steps; last reward -?\d", out, re.M)


def test_eval_task_app_serves_an_environment_and_evaluates_the_oracle_over_http():
    out = _run("bash", "examples/eval_task_app.sh", timeout=300)
    assert "16 rollouts: 16 passed, 0 not passed, 0 invalid (not judged), 0 failed to run" in out
    assert "'pass_rate': 1.0" in out


def test_judge_criterion_scores_real_rollouts_with_a_registered_function():
    out = _run(sys.executable, "examples/judge_criterion.py", timeout=300)
    oracle = re.search(r"^oracle env return ([\d.]+)  asks ([\d.]+) .*blended reward ([\d.]+)$", out, re.M)
    guess = re.search(r"^guess  env return ([\d.]+)  asks ([\d.]+) .*blended reward ([\d.]+)$", out, re.M)
    assert oracle and guess, out
    assert float(oracle[1]) == 1.0 and float(guess[1]) == 0.0
    assert float(oracle[2]) > float(guess[2]) == 0.0
    assert float(oracle[3]) > float(guess[3])


def test_the_byod_walkthrough_goes_from_a_csv_to_a_reward_function_and_a_training_run(tmp_path):
    pytest.importorskip("torch")
    out = _run("bash", "examples/byod/walkthrough.sh", TMPDIR=str(tmp_path))
    assert "wrote 300 rows to records.csv" in out
    assert "split: 237 train, 63 held out (stratified by deciding rule)" in out
    assert "ok: housing (housing/rulebook.yaml)" in out
    assert "decisions: approve 129, waitlist 42, deny 129" in out
    rewards = dict(re.findall(r"^(gold|wrong decision|invented fact) .*reward ([+-][\d.]+)", out, re.M))
    assert float(rewards["gold"]) == 1.9  # the ceiling without graded credit
    assert float(rewards["gold"]) > float(rewards["invented fact"]) > float(rewards["wrong decision"])
    assert "held-out decision accuracy per rule branch (seed 0, 3 GRPO steps)" in out
    assert (next(tmp_path.glob("tmp.*")) / "runs" / "housing-quick" / "metrics.csv").is_file()


def test_every_example_named_here_exists():
    for name in EXAMPLES:
        assert (ROOT / name).is_file(), name
