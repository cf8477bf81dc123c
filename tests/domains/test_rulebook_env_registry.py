"""Every shipped rulebook domain is an environment, configured strictly and scored by its default run config."""

import subprocess
import sys
from pathlib import Path

import pytest

from proofgym.config import ConfigError, load_run_config
from proofgym.domains import RulebookEnv, default_run_config, domain_names, register_rulebook_env
from proofgym.envs import ENVIRONMENTS, env_names, make

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_every_shipped_domain_is_a_registered_environment():
    assert set(domain_names()) <= set(env_names())
    for name in domain_names():
        with make(name) as env:
            assert isinstance(env, RulebookEnv) and env.domain.name == name


def test_importing_envs_does_not_import_the_domains():
    code = ("import sys, proofgym.envs;"
            "print('proofgym.domains' in sys.modules, 'proofgym.domains._env' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False False"


@pytest.mark.parametrize("name", domain_names())
def test_the_default_run_config_is_the_shipped_config_file(name):
    shipped = load_run_config(CONFIGS / "run" / f"{name}.yaml")
    assert default_run_config(name).model_dump() == shipped.model_dump()


def test_an_unknown_config_key_is_an_error_naming_the_key_and_the_known_keys():
    with pytest.raises(ConfigError, match=r"environment 'loan': invalid config: chatty: unknown key.*'chat'"):
        make("loan", chatty=True)


def test_an_invalid_config_value_is_an_error_naming_the_key():
    with pytest.raises(ConfigError, match="max_turns"):
        make("grant_eligibility", max_turns=0)


def test_a_run_config_file_replaces_the_default_reward_path(tmp_path):
    config = tmp_path / "run.yaml"
    text = (CONFIGS / "run" / "grant_eligibility.yaml").read_text().replace("floor: -1.0", "floor: -0.5")
    config.write_text(text)
    with make("grant_eligibility", run_config=str(config)) as env:
        env.reset(0)
        result = env.step("not an answer")
    assert result.reward == -0.5 and result.info["outcome"] == "format_error"


def test_a_missing_run_config_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: config file not found"):
        make("grant_eligibility", run_config=str(tmp_path / "nope.yaml"))


@pytest.mark.parametrize("change, key", [("on_invalid: abstain", "reward.on_invalid"),
                                         ("action: warn", "error_budget.action")])
def test_a_reward_path_that_could_raise_during_a_step_is_refused(tmp_path, change, key):
    config = tmp_path / "run.yaml"
    replacement = "on_invalid: raise" if "on_invalid" in change else "action: abort"
    config.write_text((CONFIGS / "run" / "loan.yaml").read_text().replace(change, replacement))
    with pytest.raises(ConfigError, match=key):
        make("loan", run_config=str(config))


def test_a_user_domain_can_be_registered_under_another_name():
    register_rulebook_env("loan", "loan-copy-test")
    try:
        with make("loan-copy-test", chat=False) as env:
            assert env.domain.name == "loan" and env.config.chat is False
    finally:
        ENVIRONMENTS.unregister("loan-copy-test")


def test_the_default_reward_path_builds_quickly_once_built_and_never_blocks(tmp_path):
    from proofgym.envs import quick_to_make
    from proofgym.domains import RulebookEnvFactory

    factory = RulebookEnvFactory("loan")
    assert not factory.builds_quickly()  # the first build loads and compiles the rulebook
    with factory(max_turns=2) as env:
        assert env.blocking is False  # checked by the in-process rule kernel: its calls may run on a loop
    assert factory.builds_quickly() and factory.builds_quickly(chat=False)
    assert not factory.builds_quickly(run_config=str(tmp_path / "run.yaml"))  # a file is read on each build
    with make("grant_eligibility"):
        pass
    assert quick_to_make("grant_eligibility")

