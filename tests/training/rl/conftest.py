"""Fixtures shared by the RL tests."""

from __future__ import annotations

import pytest

from ._run import TINY_TOML, train


@pytest.fixture(scope="session")
def trained_seed_5(tmp_path_factory):
    """``proofgym train --config rl.toml --seed 5`` (the tiny config: one iteration, checkpointed), run once for
    every test that reads a finished run: ``(config, output_dir, completed process)``. Copy the output before
    changing it."""
    folder = tmp_path_factory.mktemp("trained_seed_5")
    config = folder / "rl.toml"
    config.write_text(TINY_TOML, encoding="utf-8")
    done = train(config, folder / "run", "--seed", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    return config, folder / "run", done
