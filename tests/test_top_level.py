"""The curated top level: ``import proofgym as pg``; each name works end to end, and importing proofgym loads none
of them until used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import proofgym as pg
from proofgym.config import RunConfig
from proofgym.core import ConfigError

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def test_the_list_is_short_documented_and_resolves() -> None:
    assert len(pg.__all__) <= 16
    for name in pg.__all__:
        assert getattr(pg, name) is not None
        if not name.startswith("__"):
            assert f"`{name}`" in pg.__doc__, f"{name} is not in proofgym's module docstring"
    assert set(pg.__all__) <= set(dir(pg))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        pg.nothing_here  # noqa: B018


def test_each_name_is_the_one_object_its_package_exports() -> None:
    from proofgym import core, envs, judges, rewards, verifiers

    assert pg.make is envs.make and pg.register_env is envs.register_env
    assert pg.Environment is envs.Environment and pg.StepResult is envs.StepResult
    assert pg.RewardFunction is rewards.RewardFunction
    assert pg.register_verifier is verifiers.register_verifier and pg.Verifier is verifiers.Verifier
    assert pg.register_criterion is judges.register_criterion
    assert (pg.Claim, pg.Verdict, pg.Outcome, pg.ErrorKind, pg.RejectedFact) == (
        core.Claim, core.Verdict, core.Outcome, core.ErrorKind, core.RejectedFact)


def test_import_proofgym_loads_none_of_them() -> None:
    code = ("import sys, proofgym; print(sorted(m for m in sys.modules if m.startswith('proofgym.')));"
            "proofgym.make; print('proofgym.envs' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]


def test_make_builds_an_environment_that_an_oracle_passes() -> None:
    with pg.make("grant_eligibility", split="test") as env:
        assert isinstance(env, pg.Environment)
        [action] = env.oracle_actions(0)
        env.reset(0)
        result = env.step(action)
    assert isinstance(result, pg.StepResult)
    assert result.done and result.reward > 0


@pytest.mark.parametrize("kind", ["run", "eval", "rl"])
def test_load_config_gives_every_shipped_config_its_kinds_model(kind: str) -> None:
    from proofgym.evaluation import EvalConfig
    from proofgym.training.rl import RLConfig

    model = {"run": RunConfig, "eval": EvalConfig, "rl": RLConfig}[kind]
    files = sorted(path for path in (CONFIGS / kind).iterdir() if path.suffix in (".yaml", ".toml", ".json"))
    assert files
    for path in files:
        assert isinstance(pg.load_config(path), model), path


def test_a_loaded_run_config_gives_a_reward_function(tmp_path: Path) -> None:
    path = tmp_path / "grant.yaml"
    path.write_text("kind: run\nname: grant\nverifier: {kind: rulebook, domain: grant_eligibility}\n"
                    "parser: {kind: json_block, decisions: [permit, deny]}\n",
                    encoding="utf-8")
    reward = pg.load_config(path).reward_function()
    assert isinstance(reward, pg.RewardFunction)
    [item] = reward.score(None, ["no decision block at all"], [{"gold": "permit"}])
    assert item.outcome == "format_error" and reward(None, ["no block"], [{"gold": "permit"}]) == [item.reward]


def test_load_config_refuses_what_is_no_config(tmp_path: Path) -> None:
    rulebook = tmp_path / "rules.yaml"
    rulebook.write_text("facts: {}\ndecisions: [yes, no]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="this is a rulebook"):
        pg.load_config(rulebook)
    unknown = tmp_path / "what.yaml"
    unknown.write_text("hello: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot tell which kind"):
        pg.load_config(unknown)


def test_register_env_verifier_and_criterion() -> None:
    from proofgym.envs import ENVIRONMENTS
    from proofgym.judges import CRITERIA, RubricScorer, rubric_set_from_data
    from proofgym.traces import SessionTrace, StepTrace
    from proofgym.verifiers import VERIFIER_KINDS, build_verifier
    from pydantic import BaseModel

    class Options(BaseModel):
        decision: str = "yes"

    class Always:
        name, version = "always", "1"

        def __init__(self, options: Options) -> None:
            self.options = options

        async def verify_many(self, claims: Any) -> list[pg.Verdict]:
            return [pg.Verdict(pg.Outcome.CERTIFIED if c.decision == self.options.decision else pg.Outcome.REFUTED,
                               decision=self.options.decision) for c in claims]

    pg.register_verifier("top-level-test", Options, Always)
    pg.register_env("top-level-test", lambda **config: pg.make("grant_eligibility", **config))

    @pg.register_criterion("top_level_test.steps")
    def steps(ctx: Any) -> float:
        return min(1.0, len(ctx.steps_so_far) / 2)

    try:
        verifier = build_verifier("top-level-test", {"decision": "yes"})
        assert isinstance(verifier, pg.Verifier)
        with pg.make("top-level-test") as env:
            assert env.reset(0).text
        rubrics = rubric_set_from_data({"criteria": [{"id": "steps", "description": "d", "function": steps}]},
                                       source="t")
        trace = SessionTrace(session_id="s", run_id="r", env_name="e",
                             steps=[StepTrace(index=0, observation="o", action={}, reward=0.0, done=True)])
        [score] = RubricScorer(rubrics).score_sync([trace])
        assert score.outcome.total == 0.5
        assert score.outcome.criteria[0].judge == "programmatic:top_level_test.steps"
    finally:
        VERIFIER_KINDS.unregister("top-level-test")
        ENVIRONMENTS.unregister("top-level-test")
        CRITERIA.unregister("top_level_test.steps")
