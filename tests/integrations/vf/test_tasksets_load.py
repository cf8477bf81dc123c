"""Every proofgym environment loads as a verifiers 0.4 taskset through verifiers' own loader, its tasks are the
environment's seeds as ``proofgym eval`` poses them, and bad input gets one clear line."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

vf = pytest.importorskip("verifiers.v1")

from pydantic import ValidationError  # noqa: E402

from proofgym.envs import env_hook, env_names, make  # noqa: E402
from proofgym.integrations.vf import ProofgymTaskset  # noqa: E402

#: The built-in environments, each with its own module (``vf-eval proofgym-<env>``); a plugin's goes through
#: ``proofgym-env``.
BUILT_IN = ["crafter", "fact_finding", "grant_eligibility", "loan", "math", "verilog"]


def load(taskset: dict) -> object:
    return vf.load_environment(vf.resolve_env_config({"taskset": taskset})).taskset


@pytest.mark.parametrize("env", BUILT_IN)
def test_each_built_in_environment_is_its_own_taskset_module(env: str) -> None:
    module = importlib.import_module(f"proofgym_{env}")
    tasksets = [name for name in module.__all__ if isinstance(getattr(module, name), type)
                and issubclass(getattr(module, name), vf.Taskset)]
    assert len(tasksets) == 1, module.__all__
    taskset = load({"id": f"proofgym-{env.replace('_', '-')}", "num_tasks": 2})
    assert type(taskset) is getattr(module, tasksets[0]) and taskset.config.env == env
    with make(env) as instance:
        tools = not env_hook(instance, "accepts_text")
        for task in taskset:
            observation = instance.reset(task.data.seed)
            assert task.data.prompt == observation.text
            assert task.data.system_prompt == (observation.data.get("system") or None)
    assert [task.key for task in taskset] == [f"{env}:0", f"{env}:1"]
    assert taskset.config.task.tools is tools
    assert [type(server).__name__ for task in taskset for server in task.toolsets(task.config)] == \
        (["EnvToolset"] * 2 if tools else [])


@pytest.mark.parametrize("env", env_names())
def test_every_registered_environment_loads_through_proofgym_env(env: str) -> None:
    taskset = load({"id": "proofgym-env", "env": env, "seeds": "3-4,7", "env_config": {}})
    assert type(taskset) is ProofgymTaskset
    assert [task.key for task in taskset] == [f"{env}:3", f"{env}:4", f"{env}:7"]
    assert [task.data.seed for task in taskset] == [3, 4, 7]


def test_the_plugin_environment_is_reached_through_proofgym_env() -> None:
    assert "parity" in env_names()  # examples/plugin, registered through its entry point
    task = next(iter(load({"id": "proofgym-env", "env": "parity", "num_tasks": 1})))
    assert task.data.env == "parity" and "even or odd" in task.data.prompt


def test_env_config_reaches_the_environment_and_the_key() -> None:
    taskset = load({"id": "proofgym-loan", "num_tasks": 2, "env_config": {"split": "test"}})
    with make("loan", split="test") as env:
        assert [task.data.prompt for task in taskset] == [env.reset(seed).text for seed in (0, 1)]
    keys = [task.key for task in taskset]
    assert keys[0].startswith("loan:0:") and len(set(keys)) == 2


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, ValidationError):
        text = "\n".join(line for line in text.splitlines()[1:] if "errors.pydantic.dev" not in line)
    return text


def test_an_unknown_environment_id_is_one_clear_line() -> None:
    with pytest.raises(ModuleNotFoundError) as raised:
        load({"id": "proofgym-nosuchenv"})
    assert "taskset 'proofgym-nosuchenv' not found" in str(raised.value)
    with pytest.raises(ValidationError) as raised:
        load({"id": "proofgym-env", "env": "nosuchenv"})
    message = _one_line(raised.value)
    assert "'nosuchenv' is no proofgym environment: expected one of crafter, fact_finding" in message
    assert "--env.taskset.env NAME" in message
    with pytest.raises(ValueError, match=r"^env: no proofgym environment given: expected one of crafter"):
        load({"id": "proofgym-env"})
    with pytest.raises(ValidationError) as raised:
        load({"id": "proofgym-loan", "env": "math"})
    assert "this taskset is 'loan'; for 'math' use proofgym-env --env.taskset.env math" in _one_line(raised.value)


def test_a_taskset_field_that_does_not_exist_is_one_clear_line() -> None:
    with pytest.raises(ValidationError) as raised:
        load({"id": "proofgym-loan", "num_taks": 3})
    errors = raised.value.errors()
    assert [(error["loc"][-1], error["type"]) for error in errors] == [("num_taks", "extra_forbidden")]
    with pytest.raises(ValidationError) as raised:
        load({"id": "proofgym-math", "seeds": "3-1"})
    assert "range '3-1' ends before it starts" in _one_line(raised.value)


def test_a_bad_env_config_names_the_environment_and_the_key() -> None:
    with pytest.raises(Exception) as raised:
        load({"id": "proofgym-loan", "num_tasks": 1, "env_config": {"no_such_key": 1}})
    assert "no_such_key" in str(raised.value) and "loan" in str(raised.value)


def test_the_taskset_modules_are_in_the_wheel() -> None:
    """setuptools finds every package under src/ (pyproject's packages.find): the per-environment modules and
    proofgym_env ship in the wheel beside proofgym, and ``pip install -e .`` serves them from src/."""
    from setuptools import find_packages

    root = Path(__file__).resolve().parents[3]
    assert tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"] == \
        {"where": ["src"]}
    found = set(find_packages(str(root / "src")))
    assert {f"proofgym_{env}" for env in BUILT_IN} | {"proofgym_env", "proofgym.integrations.vf"} <= found
