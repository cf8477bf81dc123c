"""Scoring trajectories: both levels, programmatic and LLM criteria together, the blend and its abstentions, and the
results written back into a trace that the trace store keeps."""

from __future__ import annotations

import pytest

from proofgym.judges import (
    CRITERIA,
    JUDGE_SOURCE,
    CriterionVerdict,
    JudgeVerdict,
    RubricScorer,
    register_criterion,
    rubric_set_from_data,
)
from proofgym.traces import EnvEvent, OutcomeReward, SessionTrace, StepTrace, TraceStore


@pytest.fixture(autouse=True)
def _criteria():
    @register_criterion("test.tool_ok")
    def tool_ok(ctx):
        return bool(ctx.step.env_event.result.get("ok")), "from the tool result"

    register_criterion("test.steps", lambda ctx: len(ctx.steps_so_far) / 10)
    register_criterion("test.broken", lambda ctx: 1 / 0)
    register_criterion("test.off_scale", lambda ctx: 7)
    yield
    for name in ("test.tool_ok", "test.steps", "test.broken", "test.off_scale"):
        CRITERIA.unregister(name)


def trace(rewards=(0.0, 0.0, 1.0), oks=(False, True, True)) -> SessionTrace:
    steps = [StepTrace(index=i, observation=f"obs {i}", action={"tool": "t"}, reward=r,
                       env_event=EnvEvent(tool="t", args={"i": i}, result={"ok": ok}, reward=r), done=i == 2)
             for i, (r, ok) in enumerate(zip(rewards, oks))]
    return SessionTrace(session_id="s1", run_id="r1", env_name="toy", steps=steps,
                        outcome_reward=OutcomeReward(total=sum(rewards), steps=len(steps), score=1.0))


class FakeJudge:
    """A Python judge: a fixed score per criterion id (None: invalid)."""

    name = "fake"

    def __init__(self, scores):
        self.scores, self.items = scores, []

    async def judge(self, items):
        self.items += items
        out = []
        for item in items:
            verdicts = tuple(CriterionVerdict(c.id, self.scores.get(c.id), "because", self.name)
                             for c in item.rubric.criteria)
            error = None if all(v.valid for v in verdicts) else "malformed"
            out.append(JudgeVerdict(self.name, verdicts, error_kind=error,
                                    calls=({"request": {"model": "m"}, "response": "{}", "latency_s": 0.2},)))
        return out


RUBRICS = {
    "weights": {"env": 0.2, "event": 0.4, "outcome": 0.4},
    "event": {"criteria": [{"id": "ok", "description": "tool ok", "weight": 0.7, "function": "test.tool_ok",
                            "scale": "binary"},
                           {"id": "eff", "description": "efficient", "weight": 0.3}]},
    "outcome": {"criteria": [{"id": "len", "description": "len", "weight": 0.8, "function": "test.steps"},
                             {"id": "quality", "description": "quality", "weight": 0.2}]},
}


def test_both_levels_blend_with_programmatic_and_llm_criteria():
    judge = FakeJudge({"eff": 0.5, "quality": 1.0})
    scorer = RubricScorer(rubric_set_from_data(RUBRICS, source="t"), judge=judge)
    [score] = scorer.score_sync([trace()])
    events = [e.total for e in score.events]
    assert events == pytest.approx([0.15, 0.85, 0.85])
    assert score.outcome.total == pytest.approx(0.8 * 0.3 + 0.2 * 1.0)
    expected = 0.2 * 1.0 + 0.4 * sum(events) + 0.4 * score.outcome.total
    assert score.reward.value == pytest.approx(expected) and not score.reward.marked
    assert sum(score.reward.per_decision) == pytest.approx(expected)
    assert score.reward.per_decision[0] == pytest.approx(0.4 * 0.15)
    # the LLM was asked only its own criteria, one item per decision plus one for the outcome
    assert [[c.id for c in i.rubric.criteria] for i in judge.items] == [["eff"]] * 3 + [["quality"]]
    assert judge.items[1].step_index == 1 and "Decision to judge" in judge.items[1].candidate
    assert scorer.judges == ["programmatic", "fake"]


def test_an_invalid_verdict_abstains_its_component_and_marks_the_reward():
    scorer = RubricScorer(rubric_set_from_data(RUBRICS, source="t"), judge=FakeJudge({"eff": 0.5, "quality": None}))
    [score] = scorer.score_sync([trace()])
    assert score.outcome.total is None and score.reward.abstained == ("outcome",)
    assert score.reward.value == pytest.approx(0.2 * 1.0 + 0.4 * sum(e.total for e in score.events))


def test_a_broken_or_off_scale_criterion_abstains_and_never_raises():
    rubrics = rubric_set_from_data({"outcome": {"criteria": [
        {"id": "a", "description": "d", "function": "test.broken"},
        {"id": "b", "description": "d", "function": "test.off_scale"},
        {"id": "c", "description": "d", "function": "no.such.criterion"}]}}, source="t")
    [score] = RubricScorer(rubrics).score_sync([trace()])
    assert score.outcome.total is None and score.reward.abstained == ("outcome",)
    reasons = [c.reason for c in score.outcome.criteria]
    assert "ZeroDivisionError" in reasons[0] and "off its scale" in reasons[1] and "no.such.criterion" in reasons[2]


def test_a_judge_that_raises_or_miscounts_abstains():
    class Raising:
        name = "raising"

        async def judge(self, items):
            raise RuntimeError("boom")

    [score] = RubricScorer(rubric_set_from_data(RUBRICS, source="t"), judge=Raising()).score_sync([trace()])
    assert score.reward.abstained == ("event", "outcome")
    assert score.reward.value == pytest.approx(0.2 * 1.0)


def test_llm_criteria_need_a_judge_unless_skipped():
    rubrics = rubric_set_from_data(RUBRICS, source="t")
    with pytest.raises(ValueError, match="event.eff"):
        RubricScorer(rubrics)
    [score] = RubricScorer(rubrics, missing_judge="skip").score_sync([trace()])
    assert [e.total for e in score.events] == [0.0, 1.0, 1.0]
    assert score.outcome.total == pytest.approx(0.3)


def test_results_are_written_back_and_survive_the_trace_store(tmp_path):
    scorer = RubricScorer(rubric_set_from_data(RUBRICS, source="t"), judge=FakeJudge({"eff": 0.5, "quality": 1.0}))
    original = trace()
    [score] = scorer.score_sync([original])
    judged = score.apply(original)
    store = TraceStore(tmp_path / "t.db")
    store.start_run("r1", kind="eval")
    store.write_session(judged)
    back = store.get_session("s1")
    outcome = back.outcome_reward
    assert outcome.source == JUDGE_SOURCE and outcome.kind == "blended"
    assert outcome.total == pytest.approx(score.reward.value) and back.total_reward == pytest.approx(outcome.total)
    assert outcome.annotation["environment"]["total"] == 1.0 and outcome.score == 1.0  # the official score stays
    assert outcome.annotation["outcome"]["criteria"][1] == {"id": "quality", "reason": "because", "score": 1.0,
                                                            "judge": "fake"}
    assert outcome.annotation["outcome"]["calls"][0]["latency_s"] == 0.2
    judged_steps = [[r for r in s.event_rewards if r.source == JUDGE_SOURCE] for s in back.steps]
    assert [r[0].value for r in judged_steps] == pytest.approx([e.total for e in score.events])
    assert judged_steps[0][0].annotation["criteria"][0]["reason"] == "from the tool result"
    # judging again replaces the earlier judgement, and reads the environment's return, not the old blend
    [again] = scorer.score_sync([back])
    assert again.reward.env_return == 1.0 and again.reward.value == pytest.approx(score.reward.value)
    twice = again.apply(back)
    assert [len([r for r in s.event_rewards if r.source == JUDGE_SOURCE]) for s in twice.steps] == [1, 1, 1]
    store.close()
