"""A run config names a domain folder by path (``verifier: {kind: rulebook, domain: ../housing}``), relative to
the config file; its reward path scores the folder's records, and a folder that is not there is one line."""

import pytest
from _byod import byod_domain, forget_domain

from proofgym.config import ConfigError, load_run_config
from proofgym.domains import build_example, default_run_config, get_domain, gold_completion, resolve_domain


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = byod_domain(tmp_path_factory.mktemp("byod"))
    yield folder
    forget_domain()


def write_config(folder, domain):
    folder.mkdir(exist_ok=True)
    path = folder / "run.yaml"
    path.write_text("kind: run\nname: housing\n"
                    "parser: {kind: json_block, decisions: [approve, waitlist, deny], require_facts: true}\n"
                    f"verifier: {{kind: rulebook, domain: {domain}}}\n")
    return path


def test_a_relative_folder_is_read_from_the_config_files_folder(housing, tmp_path, monkeypatch):
    config = write_config(housing.parent / "configs", "../housing")
    monkeypatch.chdir(tmp_path)  # not the config's folder: the path is the config file's
    run = load_run_config(config)
    assert run.verifier.options == {"domain": str(housing.resolve())}
    reward_fn = run.reward_function()
    try:
        domain = get_domain("housing")
        for record in domain.split_records("heldout")[:5]:
            row = build_example(domain, record, chat=False)
            right = gold_completion(domain, record)
            wrong = next(d for d in domain.spec.decisions if d != row["gold"])
            gold, bad = reward_fn.score([row["prompt"]] * 2,
                                        [right, right.replace(f'"{row["gold"]}"', f'"{wrong}"')], [row, row])
            assert gold.outcome == "certified" and gold.components["correct"] == 1.0
            assert bad.components["correct"] == 0.0 and bad.reward < gold.reward
    finally:
        reward_fn.close()


def test_the_folder_loads_once_by_path_and_by_name(housing):
    assert resolve_domain(str(housing)) is resolve_domain("housing") is get_domain("housing")
    assert default_run_config("housing").parser.decisions == ["approve", "waitlist", "deny"]


def test_a_missing_folder_is_one_line_naming_the_config_and_the_folder(housing, tmp_path):
    config = write_config(tmp_path, "./nowhere")
    with pytest.raises(ConfigError) as info:
        load_run_config(config).reward_function()
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith(f"{config}: verifier.domain:") and str(tmp_path / "nowhere") in line
    assert "domain.yaml" in line
