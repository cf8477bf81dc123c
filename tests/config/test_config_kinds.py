"""Config kinds: every shipped file declares its kind (``kind: run | eval | rl``) and sits in ``configs/<kind>/``; a
loader given a file of another kind says so in one line naming the file, the kind it is and the kind the loader
wants; a file of no clear kind is validated as usual. Old files (no ``kind``, a run config's ``train:``, an eval
config's ``[eval]``) load as before, with one deprecation line naming the change; a section under both names is an
error."""

from __future__ import annotations

import logging
import re
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
#: The files shipped in configs/<kind>/ and in the package (the domains' and math's run configs), by kind.
DECLARED = [
    *((path, EVAL_CONFIG) for path in sorted((CONFIGS / "eval").iterdir())),
    *((path, RL_CONFIG) for path in sorted((CONFIGS / "rl").iterdir())),
    *((path, RUN_CONFIG) for path in [*sorted((CONFIGS / "run").iterdir()),
                                      *sorted((ROOT / "src" / "proofgym").glob("*/*.run.yaml"))]),
]
#: Files of other projects and rulebooks, which declare no kind: recognised by their keys.
UNDECLARED = [
    *((path, RL_CONFIG) for path in sorted((ROOT / "tests" / "training" / "rl" / "fixtures").glob("*.toml"))),
    *((path, RULEBOOK) for path in sorted((ROOT / "src" / "proofgym" / "domains").glob("*.yaml"))
      if not path.name.endswith(".run.yaml")),
]
LOADERS = {RUN_CONFIG: load_run_config, EVAL_CONFIG: load_eval_config, RL_CONFIG: load_rl_config}
TINY_RUN = CONFIGS / "run" / "train_grant_tiny.yaml"
GRANT_EVAL = CONFIGS / "eval" / "grant.toml"
TINY_RL = CONFIGS / "rl" / "fact_finding_tiny.toml"


def _ids(cases):
    return [str(path.relative_to(ROOT)) for path, _ in cases]


@pytest.mark.parametrize("path, kind", DECLARED, ids=_ids(DECLARED))
def test_every_shipped_config_declares_its_kind_and_loads_as_it(path, kind, caplog):
    data = read_config_file(path)
    assert data["kind"] == kind.tag and config_kind(data) is kind
    if path.is_relative_to(CONFIGS):
        assert path.parent.name == kind.tag
    assert is_rl_config(path) == (kind is RL_CONFIG)
    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        LOADERS[kind](path)
    assert not caplog.records  # nothing deprecated in what we ship


def test_configs_holds_one_folder_per_kind_and_nothing_else():
    assert sorted(path.name for path in CONFIGS.iterdir()) == ["eval", "rl", "run"]


def test_the_shipped_configs_use_one_vocabulary():
    for path, kind in DECLARED:
        data = read_config_file(path)
        assert not {"train", "eval"} & set(data), path
    assert "training" in read_config_file(TINY_RUN) and "evaluation" in read_config_file(GRANT_EVAL)
    assert {"training", "evaluation"} <= set(read_config_file(TINY_RL))


@pytest.mark.parametrize("path, kind", UNDECLARED, ids=_ids(UNDECLARED))
def test_a_file_that_declares_no_kind_is_recognised_by_its_keys(path, kind):
    assert "kind" not in read_config_file(path)
    assert config_kind(read_config_file(path)) is kind
    assert is_rl_config(path) == (kind is RL_CONFIG)


WRONG = [(load_run_config, GRANT_EVAL, EVAL_CONFIG, "run"), (load_run_config, TINY_RL, RL_CONFIG, "run"),
         (load_eval_config, TINY_RL, RL_CONFIG, "eval"), (load_eval_config, TINY_RUN, RUN_CONFIG, "eval"),
         (load_rl_config, GRANT_EVAL, EVAL_CONFIG, "rl"), (load_rl_config, TINY_RUN, RUN_CONFIG, "rl")]


@pytest.mark.parametrize("load, path, kind, wanted", WRONG,
                         ids=[f"{load.__name__}-{path.name}" for load, path, _, _ in WRONG])
def test_a_loader_given_another_kind_names_the_file_its_kind_and_the_kind_wanted_in_one_line(load, path, kind, wanted):
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value) == (f"{path}: this is {kind} (it declares kind {kind.tag}), for {kind.command}; "
                               f"this command wants kind {wanted}")


def test_a_file_of_another_kind_without_kind_is_told_by_its_keys(tmp_path):
    path = tmp_path / "rl.toml"
    path.write_text(_without_kind(TINY_RL.read_text()))
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value) == (f"{path}: this is an RL config (it has algorithm, rollout, services), for "
                               f"{RL_CONFIG.command}; this command wants kind eval")


def test_a_kind_that_is_no_kind_is_one_line(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(TINY_RUN.read_text().replace("kind: run", "kind: trl"))
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert str(info.value) == f"{path}: kind: expected one of run, eval, rl, got 'trl'"


def test_the_declared_kind_decides_not_the_keys(tmp_path):
    """A run config that declares kind eval is an eval config to every reader (the kind is what the file says)."""
    path = tmp_path / "run.yaml"
    path.write_text(TINY_RUN.read_text().replace("kind: run", "kind: eval"))
    assert config_kind(read_config_file(path)) is EVAL_CONFIG
    with pytest.raises(ConfigError, match="it declares kind eval"):
        load_run_config(path)


def test_a_file_with_keys_of_two_kinds_is_validated_as_the_kind_asked_for(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("kind: run\nverifier: {kind: rulebook, domain: loan}\nevaluation: {seeds: [0]}\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert str(info.value) == f"{path}: evaluation: unknown key"


def test_a_file_of_no_kind_is_validated_as_the_kind_asked_for(tmp_path):
    path = tmp_path / "eval.toml"
    path.write_text("[evaluation_typo]\nseeds = [0]\n")
    assert config_kind(read_config_file(path)) is None
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert f"{path}: evaluation: required key missing" in str(info.value)


# Old spellings: the shipped files as they were written before kind and the one vocabulary.

def _without_kind(text: str) -> str:
    return re.sub(r'^kind(: | = )"?\w+"?\n\n?', "", text, flags=re.MULTILINE)


def _old_run(text: str) -> str:
    return _without_kind(text).replace("\ntraining:\n", "\ntrain:\n")


def _old_eval(text: str) -> str:
    return re.sub(r"^(\[+)evaluation\b", r"\1eval", _without_kind(text), flags=re.MULTILINE)


def _deprecations(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "proofgym.config"]


def test_an_old_run_config_loads_the_same_with_one_deprecation_line(tmp_path, caplog):
    old = tmp_path / "train_grant_tiny.yaml"
    old.write_text(_old_run(TINY_RUN.read_text()))
    assert "train" in read_config_file(old) and "kind" not in read_config_file(old)
    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        loaded = load_run_config(old)
        load_run_config(old)  # read again: not said again
    assert loaded.model_dump() == load_run_config(TINY_RUN).model_dump()
    assert _deprecations(caplog) == [f"deprecated: {old}: `train:` is now `training:`; add `kind: run`"]


def test_an_old_eval_config_loads_the_same_with_one_deprecation_line(tmp_path, caplog):
    old = tmp_path / "grant.toml"
    old.write_text(_old_eval(GRANT_EVAL.read_text()))
    assert "eval" in read_config_file(old)
    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        loaded = load_eval_config(old)
    assert loaded.model_dump() == load_eval_config(GRANT_EVAL).model_dump()
    assert _deprecations(caplog) == [f'deprecated: {old}: `[eval]` is now `[evaluation]`; add `kind = "eval"` '
                                     "(at the top, before any table)"]


def test_an_rl_config_without_kind_loads_the_same_with_one_deprecation_line(tmp_path, caplog):
    old = tmp_path / "fact_finding_tiny.toml"
    old.write_text(_without_kind(TINY_RL.read_text()))
    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        loaded = load_rl_config(old)
    assert loaded.model_dump() == load_rl_config(TINY_RL).model_dump()
    assert _deprecations(caplog) == [f'deprecated: {old}: add `kind = "rl"` (at the top, before any table)']


def test_a_run_config_with_both_section_names_is_refused(tmp_path):
    path = tmp_path / "run.yaml"
    text = TINY_RUN.read_text()
    path.write_text(text + "\ntrain:\n  model: proofgym:tiny\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert str(info.value) == (f"{path}: both `train:` and `training:`: `train:` is the old name of `training:`; "
                               "keep `training:` only")


def test_an_eval_config_with_both_table_names_is_refused(tmp_path):
    path = tmp_path / "eval.toml"
    path.write_text(GRANT_EVAL.read_text() + '\n[eval]\nseeds = "0-3"\n')
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value) == (f"{path}: both `[eval]` and `[evaluation]`: `[eval]` is the old name of "
                               "`[evaluation]`; keep `[evaluation]` only")


def test_data_built_in_python_need_not_declare_its_kind(caplog):
    from proofgym.config import parse_run_config

    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        parse_run_config({"verifier": {"kind": "rulebook", "domain": "loan"}})
    assert not _deprecations(caplog)


def test_a_file_that_declares_its_kind_but_keeps_an_old_section_name_is_told_of_the_name_only(tmp_path, caplog):
    path = tmp_path / "run.yaml"
    path.write_text(TINY_RUN.read_text().replace("\ntraining:\n", "\ntrain:\n"))
    with caplog.at_level(logging.WARNING, logger="proofgym.config"):
        assert load_run_config(path).training is not None
    assert _deprecations(caplog) == [f"deprecated: {path}: `train:` is now `training:`"]
