"""config_kind: every shipped file is recognised as the kind it is, by its top-level keys; a loader given a file of
another kind says so in one line naming the command that reads it; a file of no clear kind is validated as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgym.config import (
    EVAL_CONFIG,
    RL_CONFIG,
    RULEBOOK,
    RUN_CONFIG,
    ConfigError,
    config_kind,
    load_run_config,
    read_config_file,
)
from proofgym.evaluation import load_eval_config
from proofgym.training.rl import is_rl_config, load_rl_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
SHIPPED = [
    *((path, EVAL_CONFIG) for path in [*CONFIGS.glob("eval_*.toml"), *CONFIGS.glob("crafter_*.toml")]),
    *((path, RL_CONFIG) for path in [*CONFIGS.glob("rl_*.toml"), *(ROOT / "tests" / "training" / "rl" / "fixtures").glob("*.toml")]),
    *((path, RUN_CONFIG) for path in [*CONFIGS.glob("*.yaml"), *(ROOT / "src" / "proofgym").glob("*/*.run.yaml")]),
    *((path, RULEBOOK) for path in (ROOT / "src" / "proofgym" / "domains").glob("*.yaml")
      if not path.name.endswith(".run.yaml")),
]


@pytest.mark.parametrize("path, kind", SHIPPED, ids=[str(path.relative_to(ROOT)) for path, _ in SHIPPED])
def test_every_shipped_file_is_recognised_as_its_kind(path, kind):
    assert config_kind(read_config_file(path)) is kind
    assert is_rl_config(path) == (kind is RL_CONFIG)


@pytest.mark.parametrize("load, path, kind", [
    (load_run_config, CONFIGS / "eval_grant.toml", EVAL_CONFIG),
    (load_run_config, CONFIGS / "rl_fact_finding_tiny.toml", RL_CONFIG),
    (load_eval_config, CONFIGS / "rl_fact_finding_tiny.toml", RL_CONFIG),
    (load_eval_config, CONFIGS / "train_grant_tiny.yaml", RUN_CONFIG),
    (load_rl_config, CONFIGS / "eval_grant.toml", EVAL_CONFIG),
    (load_rl_config, CONFIGS / "train_grant_tiny.yaml", RUN_CONFIG),
])
def test_a_loader_given_another_kind_says_which_command_reads_it_in_one_line(load, path, kind):
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: this is {kind} (it has ")
    assert f"for {kind.command}, not " in message


def test_a_file_with_keys_of_two_kinds_is_validated_as_the_kind_asked_for(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("verifier: {kind: rulebook, domain: loan}\neval: {seeds: [0]}\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert str(info.value) == f"{path}: eval: unknown key"


def test_a_file_of_no_kind_is_validated_as_the_kind_asked_for(tmp_path):
    path = tmp_path / "eval.toml"
    path.write_text("[evaluation_typo]\nseeds = [0]\n")
    assert config_kind(read_config_file(path)) is None
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert f"{path}: eval: required key missing" in str(info.value)
