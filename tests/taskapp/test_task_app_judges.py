"""The task app with its judges on: every rollout is scored with the environment's rubrics, and the blended reward,
each decision's verdicts and the per-decision split are answered and stored."""

from __future__ import annotations

import pytest
from _judge import requires_judge

from proofgym.judges import JUDGE_SOURCE
from proofgym.taskapp import create_app

from ._support import AND_GATE, SUBMIT, WRONG_AND_GATE, rollout_body, write_file

VERILOG = {"problem_id": "Prob001_and_gate"}
PROGRAMMATIC = {"skip_llm_criteria": True}


def scripted(*actions, seed=0):
    return rollout_body(seed, policy_name="scripted", policy_config={"actions": list(actions)})


@requires_judge
def test_a_judged_rollout_answers_the_blend_and_stores_the_verdicts(make_client, stored):
    client = make_client("verilog", env_config=VERILOG, judging=PROGRAMMATIC)
    data = client.post("/rollout", json=scripted(write_file(AND_GATE), {"tool": "compile", "args": {}},
                                                 SUBMIT)).json()
    assert data["status"] == "ok", data
    judging = data["metrics"]["details"]["judging"]
    reward = judging["reward"]
    assert [e["total"] for e in judging["events"]] == [1.0, 1.0, 1.0]
    assert judging["outcome"]["criteria"] == [{"id": "tests_passed", "reason": "the submitted design passed every "
                                               "test", "score": 1.0, "judge": "programmatic:verilog.tests_passed"}]
    env_return = reward["env_return"]
    assert reward["value"] == pytest.approx(0.2 * env_return + 0.4 * 3 + 0.4 * 1.0)
    assert sum(reward["per_decision"]) == pytest.approx(reward["value"]) and len(reward["per_decision"]) == 3
    # the returns a trainer reads are the blended reward
    assert data["metrics"]["mean_return"] == pytest.approx(reward["value"])
    assert data["pipeline_metadata"]["reward_score"] == pytest.approx(reward["value"])
    assert data["metrics"]["outcome_score"] == 1.0  # the environment's verdict is unchanged

    store = stored()
    [summary] = store.list_sessions()
    session = store.get_session(summary.session_id)
    assert session.outcome_reward.score == 1.0
    assert session.outcome_reward.source == JUDGE_SOURCE and session.total_reward == pytest.approx(reward["value"])
    assert session.outcome_reward.annotation["environment"]["total"] == pytest.approx(env_return)
    judged = [r for step in session.steps for r in step.event_rewards if r.source == JUDGE_SOURCE]
    assert [r.value for r in judged] == [1.0, 1.0, 1.0]
    assert judged[0].annotation["criteria"][0]["id"] == "compilation_success"


@requires_judge
def test_a_wrong_design_is_blended_lower(make_client):
    client = make_client("verilog", env_config=VERILOG, judging=PROGRAMMATIC)
    right = client.post("/rollout", json=scripted(write_file(AND_GATE), SUBMIT)).json()
    wrong = client.post("/rollout", json=scripted(write_file(WRONG_AND_GATE), SUBMIT)).json()
    assert wrong["metrics"]["mean_return"] < right["metrics"]["mean_return"]
    assert wrong["metrics"]["details"]["judging"]["outcome"]["total"] == 0.0


def test_judges_off_leave_the_response_as_it_was(make_client):
    client = make_client("grant_eligibility")
    data = client.post("/rollout", json=rollout_body()).json()
    assert "judging" not in data["metrics"]["details"]


def test_llm_criteria_without_a_judge_are_refused_at_start(traces_path):
    with pytest.raises(ValueError, match="design_quality"):
        create_app("verilog", env_config=VERILOG, store=traces_path, judging={})
    with pytest.raises(ValueError, match="no rubric set"):
        create_app("grant_eligibility", store=traces_path, judging={})
    with pytest.raises(ValueError, match="judg"):
        create_app("verilog", store=traces_path, judging={"rubric": "verilog", "bogus": 1})


@requires_judge
def test_the_llm_criterion_is_asked_of_the_judge_endpoint(make_client, stored):
    from proofgym.judges import RUBRIC_SETS

    from judges._fake_judges import FakeJudgeServer, Latency

    outcome = RUBRIC_SETS.get("verilog").outcome
    with FakeJudgeServer(Latency(outcome, delay_s=0.0, score=lambda cid: 7.0)) as judge:
        client = make_client("verilog", env_config=VERILOG,
                             judging={"judge_url": judge.base_url, "model": "fake-judge"})
        data = client.post("/rollout", json=scripted(write_file(AND_GATE), SUBMIT)).json()
        again = client.post("/rollout", json=scripted(write_file(AND_GATE), SUBMIT)).json()
        calls = judge.calls
    judging = data["metrics"]["details"]["judging"]
    quality = judging["outcome"]["criteria"][1]
    assert quality == {"id": "design_quality", "reason": "Looks right.", "score": 7.0, "judge": "llm:fake-judge"}
    assert judging["outcome"]["total"] == pytest.approx(0.8 + 0.2 * 0.7)
    assert judging["reward"]["abstained"] == []
    # the same design again is the same candidate: answered from the judge's cache, one call in all
    assert again["metrics"]["details"]["judging"]["outcome"]["criteria"][1]["score"] == 7.0 and calls == 1
    # the call (request, response, tokens, latency) is stored with the judged session
    store = stored()
    sessions = [store.get_session(s.session_id) for s in store.list_sessions()]
    recorded = [c for s in sessions for c in s.outcome_reward.annotation["outcome"]["calls"]]
    # (the cached verdict carries the call that made it)
    assert len(recorded) == 2 and recorded[0] == recorded[1] and recorded[0]["request"]["model"] == "fake-judge"
    assert "Looks right." in recorded[0]["response"] and recorded[0]["latency_s"] >= 0
