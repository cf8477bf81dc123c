"""The Verilog environment's rubrics score real rollouts: compilation success and process efficiency per decision,
tests passed for the outcome (programmatic), design quality by an LLM judge."""

from __future__ import annotations

import asyncio

import pytest

from proofgym.judges import RUBRIC_SETS, CriterionVerdict, JudgeVerdict, RubricScorer
from proofgym.policies import ScriptedPolicy
from proofgym.rollouts import run_rollout
from proofgym.verilog import VerilogEnv, VerilogEnvConfig

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM = "Prob001_and_gate"


def rollout(actions):
    result = asyncio.run(run_rollout("verilog", seed=0, policy=ScriptedPolicy(actions),
                                     env_config={"problem_id": PROBLEM}))
    return result.session


@pytest.fixture(scope="module")
def design():
    with VerilogEnv(config=VerilogEnvConfig(problem_id=PROBLEM)) as env:
        env.reset(0)
        return reference_design(env.problem)


def write(content):
    return {"tool": "write_file", "args": {"path": "top.v", "content": content}}


class QualityJudge:
    name = "quality"

    def __init__(self):
        self.items = []

    async def judge(self, items):
        self.items += items
        return [JudgeVerdict(self.name, tuple(CriterionVerdict(c.id, 8.0, "clear", self.name)
                                              for c in item.rubric.criteria)) for item in items]


def test_the_environment_declares_the_seeds_rubrics():
    rubrics = VerilogEnv(config=VerilogEnvConfig(problem_id=PROBLEM)).rubrics
    assert rubrics is RUBRIC_SETS.get("verilog")
    assert [(c.id, c.weight) for c in rubrics.event.criteria] == [("compilation_success", 0.7),
                                                                  ("process_efficiency", 0.3)]
    assert [(c.id, c.weight) for c in rubrics.outcome.criteria] == [("tests_passed", 0.8), ("design_quality", 0.2)]
    assert rubrics.needs_llm() == ["outcome.design_quality"]


def test_a_solver_scores_every_decision_and_the_outcome(design):
    session = rollout([write(design), {"tool": "compile"}, {"tool": "simulate"}, {"tool": "submit"}])
    judge = QualityJudge()
    [score] = RubricScorer(RUBRIC_SETS.get("verilog"), judge=judge).score_sync([session])
    assert [e.total for e in score.events] == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert score.outcome.total == pytest.approx(0.8 * 1 + 0.2 * 0.8)
    assert score.reward.value == pytest.approx(0.2 * session.total_reward + 0.4 * 4 + 0.4 * 0.96)
    # only design quality was asked of the LLM, once, with the whole trajectory (the design included)
    assert len(judge.items) == 1 and [c.id for c in judge.items[0].rubric.criteria] == ["design_quality"]
    assert "assign" in judge.items[0].candidate


def test_a_broken_design_a_redundant_call_and_a_wrong_submission_are_scored_down(design):
    broken = design.replace("assign", "asign")
    wrong = design.replace("a & b", "a | b")
    session = rollout([write(broken), {"tool": "compile"}, {"tool": "compile"}, write(wrong), write(wrong),
                       {"tool": "submit"}])
    [score] = RubricScorer(RUBRIC_SETS.get("verilog"), missing_judge="skip").score_sync([session])
    compiled = [e.criteria[0].score for e in score.events]
    efficient = [e.criteria[1].score for e in score.events]
    assert compiled == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0], [e.criteria[0].reason for e in score.events]
    assert efficient == [1.0, 1.0, 0.0, 1.0, 0.0, 1.0], [e.criteria[1].reason for e in score.events]
    assert score.outcome.criteria[0].score == 0.0 and "failed" in score.outcome.criteria[0].reason
    assert [c.id for c in score.outcome.criteria] == ["tests_passed"]  # design quality skipped, not scored 0


def test_a_rollout_without_a_submission_passes_no_tests(design):
    session = rollout([write(design), {"tool": "compile"}])
    [score] = RubricScorer(RUBRIC_SETS.get("verilog"), missing_judge="skip").score_sync([session])
    assert score.outcome.total == 0.0 and score.outcome.criteria[0].reason == "nothing was submitted"
