"""`proofgym train` on a domain folder (``training.dataset.domain: ./my_domain``, as ``proofgym domain init``
wrote it): training rows from its train split, held-out rows from its held-out split, scored by its reward path."""

import pytest
from _byod import byod_domain, forget_domain

from proofgym.config import ConfigError, load_run_config
from proofgym.domains import get_domain
from proofgym.training.trl._run import _check_domains, training_rows


class _Tokenizer:
    chat_template = None


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = byod_domain(tmp_path_factory.mktemp("byod"))
    yield folder
    forget_domain()


def config(folder, dataset_domain, heldout_n=30):
    path = folder / "train.yaml"
    path.write_text("kind: run\nname: housing\n"
                    "parser: {kind: json_block, decisions: [approve, waitlist, deny], require_facts: true}\n"
                    "verifier: {kind: rulebook, domain: ./housing}\n"
                    "training:\n  model: proofgym:tiny\n"
                    f"  dataset: {{domain: {dataset_domain}, n: 200, seed: 0, prompt_format: plain}}\n"
                    f"  heldout: {{n: {heldout_n}, seed: 1}}\n")
    return load_run_config(path)


def test_rows_come_from_the_folders_splits(housing, monkeypatch):
    monkeypatch.chdir(housing.parent)  # training paths are the working directory's
    run = config(housing.parent, "./housing")
    _check_domains(run.training)
    rows, heldout = training_rows(run, run.training, _Tokenizer())
    domain = get_domain("housing")
    train_ids = {record.id for record in domain.split_records("train")}
    heldout_ids = [record.id for record in domain.split_records("heldout")][:30]
    assert len(rows) == 200 and {row["id"] for row in rows} <= train_ids
    assert [row["id"] for row in heldout] == heldout_ids
    reward_fn = run.reward_function()
    try:
        scored = reward_fn.score([row["prompt"] for row in heldout], ["no answer"] * len(heldout), heldout)
        assert all(item.outcome == "format_error" for item in scored)
    finally:
        reward_fn.close()


def test_a_dataset_folder_that_is_not_there_is_one_line(housing, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "housing").symlink_to(housing)
    run = config(tmp_path, "./elsewhere")
    with pytest.raises(ConfigError) as info:
        _check_domains(run.training)
    assert str(info.value).startswith("training.dataset.domain: ") and "no such domain folder" in str(info.value)
