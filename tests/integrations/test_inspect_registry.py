"""inspect_ai finds proofgym through its ``inspect_ai`` entry point (named ``proofgym``, as the package): a task per
registered environment, the generic ``proofgym/env``, the scorer and the ``proofgym`` model API; importing the
registry loads no model library and builds no environment. And the scorer works under inspect's own ``generate()``
(no episode solver): it steps a fresh environment with the model's reply."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytest.importorskip("inspect_ai")

from _scripted_model import ScriptedModel  # noqa: E402
from proofgym.envs import env_hook, env_names, make  # noqa: E402

HEAVY = ["torch", "transformers", "trl", "peft", "datasets", "ray", "math_verify", "crafter", "openai"]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_entry_point_is_named_after_the_package():
    (point,) = [point for point in entry_points(group="inspect_ai") if point.value.startswith("proofgym.")]
    assert point.name == "proofgym" and point.value == "proofgym.integrations._inspect_registry"


def test_inspect_finds_every_environment_task_the_generic_task_and_the_model_api():
    code = ("import json; from inspect_ai._util.registry import registry_lookup, registry_info;"
            f"names = {env_names()!r} + ['env'];"
            "found = [registry_info(registry_lookup('task', 'proofgym/' + n)).name for n in names];"
            "found.append(registry_info(registry_lookup('modelapi', 'proofgym/proofgym')).name);"
            "print(json.dumps(found))")
    assert json.loads(_run(code)) == [f"proofgym/{name}" for name in [*env_names(), "env"]] + ["proofgym/proofgym"]


def test_importing_the_registry_loads_no_model_library_and_no_environment():
    code = ("import sys, json, proofgym.integrations._inspect_registry;"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules] + "
            "[m for m in sys.modules if m.startswith(('proofgym.verilog', 'proofgym.math', 'proofgym.crafter'))]))")
    assert json.loads(_run(code)) == []


def test_the_scorer_steps_a_fresh_environment_under_inspects_own_generate(tmp_path):
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    from proofgym.integrations._inspect_scorer import proofgym_scorer

    with make("loan") as env:
        action = env_hook(env, "oracle_actions")(0)[0]
        prompt = env.reset(0).text
        expected = env.step(action).reward  # the environment's own reward for the same answer
    gold = action["args"]["completion"]
    with ScriptedModel([gold]) as model:
        task = Task(dataset=[Sample(input=prompt, id=0, metadata={"seed": 0})], solver=generate(),
                    scorer=proofgym_scorer("loan"))
        (log,) = inspect_eval(task, model="proofgym/scripted", model_base_url=model.url, log_dir=str(tmp_path),
                              display="none")
    score = log.samples[0].scores["proofgym_scorer"]
    assert log.status == "success" and score.metadata["outcome"] == "certified"
    assert score.value == pytest.approx(expected) and expected > 0
    assert "proof summary: Decision 'approve'" in score.explanation
