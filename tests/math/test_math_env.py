"""The single-turn math environment: registered, the gold answer earns the top reward, a wrong one does not, a
hedge scores the floor, the gold never shows, bad config is one clear error; served and evaluated like the other
domains (the task app over HTTP, ``proofgym eval`` with the oracle)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("math_verify", reason="the math verifier needs Math-Verify: pip install 'proofgym[math]'")

from proofgym.config import parse_run_config  # noqa: E402
from proofgym.core import ConfigError  # noqa: E402
from proofgym.envs import env_names, make  # noqa: E402
from proofgym.math import MathEnv, MathProblem, default_math_run_config, write_problems  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reward_fn():
    data = default_math_run_config().model_dump(mode="python", exclude_none=True)
    data["runtime"] = {"executor": "in_process"}  # no worker processes in these tests
    data["parser"] = {"kind": "math", "problems": "builtin"}
    with parse_run_config(data).reward_function() as function:
        yield function


def test_math_is_a_registered_environment(reward_fn):
    assert "math" in env_names()
    env = make("math", reward_function=reward_fn)
    assert isinstance(env, MathEnv) and env.tools[0]["function"]["name"] == "answer"


def test_the_oracle_earns_the_top_reward_and_a_wrong_answer_does_not(reward_fn):
    env = make("math", reward_function=reward_fn)
    top = reward_fn.shaper.bounds[1]
    for seed in range(0, 200, 23):
        gold = env.step(env.oracle_actions(seed)[0])
        assert gold.reward == pytest.approx(top) and gold.done and gold.passed and gold.correct, gold.info
        assert gold.verdict["evidence"]["gold_parsed"] and gold.verdict["evidence"]["answer_parsed"]
        env.reset(seed)
        wrong = env.step("I think it is \\boxed{\\frac{1}{7} + 1000003}.")
        assert wrong.outcome == "refuted" and not wrong.passed and wrong.reward < top


def test_a_hedge_or_no_answer_scores_the_floor(reward_fn):
    env = make("math", reward_function=reward_fn)
    env.reset(3)
    hedge = env.step({"tool": "answer", "args": {"completion": "\\boxed{1} or \\boxed{2}"}})
    assert hedge.outcome == "format_error" and hedge.reward == reward_fn.shaper.bounds[0]
    env.reset(3)
    assert env.step("no idea").reward == reward_fn.shaper.bounds[0]


def test_the_observation_never_shows_the_gold_answer(reward_fn, tmp_path):
    path = write_problems([MathProblem("secret-000", "What is 6 times 7?", "4242", "hand")], tmp_path / "p.jsonl")
    env = make("math", problems=str(path))
    observation = env.reset(0)
    assert "4242" not in json.dumps(observation.to_dict())
    assert observation.data["problem_id"] == "secret-000"
    assert env.step("\\boxed{4242}").outcome == "certified"


def test_a_malformed_tool_call_is_not_an_answer(reward_fn):
    env = make("math", reward_function=reward_fn, max_turns=2)
    env.reset(0)
    first = env.step({"tool": "answer", "args": {}})
    assert not first.done and "error" in first.info
    assert env.step(env.oracle_actions(0)[0]).passed


@pytest.mark.parametrize(("config", "words"), [({"max_turns": True}, "max_turns"), ({"problem": "x"}, "problem"),
                                               ({"seed_offset": -1}, "seed_offset")])
def test_a_bad_config_names_the_key(config, words):
    with pytest.raises(ConfigError, match=words):
        make("math", **config)


def test_the_shipped_config_file_is_the_environment_s_reward_path():
    from proofgym.config import load_run_config

    shipped = load_run_config(ROOT / "configs" / "run" / "math.yaml")
    assert shipped.model_dump() == default_math_run_config().model_dump()
    assert shipped.runtime.executor == "process" and shipped.verifier.kind == "math"


@pytest.mark.slow  # a task app subprocess and its verifier worker start: about 30 s on 2 busy cores
def test_math_is_served_and_evaluated(tmp_path):
    from taskapp._support import TaskAppProcess, rollout_body

    with TaskAppProcess("math", traces=tmp_path / "traces.db") as app:
        with app.client() as client:
            right = client.post("/rollout", json=rollout_body(5)).json()
            wrong = client.post("/rollout", json=rollout_body(
                5, policy_name="scripted", policy_config={"actions": ["\\boxed{\\frac{1}{7} + 1000003}"]})).json()
    assert right["metrics"]["outcome_score"] == 1.0, right
    assert wrong["metrics"]["outcome_score"] == 0.0
    result = subprocess.run([sys.executable, "-c", "from proofgym.cli import main; main()", "eval", "--config",
                             str(ROOT / "configs" / "eval" / "math.toml")],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
