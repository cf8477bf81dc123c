"""A verifier that cannot be built is a ConfigError naming the run config's file and the verifier key at fault
(an unknown domain was a KeyError traceback; a missing rulebook named only the rulebook)."""

import pytest

from proofgym.config import ConfigError, load_run_config


def run_config(tmp_path, verifier):
    path = tmp_path / "run.yaml"
    path.write_text(f"verifier: {verifier}\n")
    return path, load_run_config(path)


def test_an_unknown_domain_names_the_file_and_verifier_domain(tmp_path):
    path, run = run_config(tmp_path, "{kind: rulebook, domain: nope}")
    with pytest.raises(ConfigError) as info:
        run.reward_function()
    assert str(info.value) == (f"{path}: verifier.domain: unknown domain 'nope'; known domains: grant_eligibility, "
                               f"loan (a domain folder is given as a path: ./nope)")
    assert info.value.problems[0]["loc"] == ("verifier", "domain")


def test_a_missing_rulebook_names_the_file_verifier_path_and_the_rulebook(tmp_path):
    path, run = run_config(tmp_path, f"{{kind: rulebook, path: {tmp_path / 'missing.yaml'}}}")
    with pytest.raises(ConfigError) as info:
        run.reward_function()
    assert str(info.value).startswith(f"{path}: verifier.path: {tmp_path / 'missing.yaml'}: cannot read the rulebook")
    assert "\n" not in str(info.value)


def test_an_invalid_rulebook_gives_one_line_per_problem_each_naming_both_files(tmp_path):
    rulebook = tmp_path / "rb.yaml"
    rulebook.write_text("name: rb\ndecisions: [a]\nfacts: {age: {type: integr}}\nbogus: 1\n")
    path, run = run_config(tmp_path, f"{{kind: rulebook, path: {rulebook}}}")
    with pytest.raises(ConfigError) as info:
        run.reward_function()
    lines = str(info.value).splitlines()
    assert len(lines) >= 2 and all(line.startswith(f"{path}: verifier.path: {rulebook}: ") for line in lines)


def test_an_unimportable_function_names_verifier_function(tmp_path):
    path, run = run_config(tmp_path, "{kind: python, function: 'nowhere.module:verify'}")
    with pytest.raises(ConfigError, match=rf"^{path}: verifier\.function: cannot import module 'nowhere\.module'"):
        run.reward_function()
