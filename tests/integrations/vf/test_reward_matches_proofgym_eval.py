"""The taskset's reward is ``proofgym eval``'s: a completion ``proofgym eval`` recorded (its OpenAI policy against a
model server, or the oracle's tool calls) scores the same through the verifiers taskset's ``@vf.reward``, seed by
seed, and ``trace.info["proofgym"]`` carries the verdict, its evidence and the certificate check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _scripted_model import ScriptedModel
from integrations.vf._vf_support import assistant_message, proofgym_eval, scored_trace, write_eval

from proofgym.envs import env_hook, make


def oracle_completion(env: str, seed: int) -> str:
    with make(env) as instance:
        instance.reset(seed)
        return str(env_hook(instance, "oracle_actions")(seed)[0]["args"]["completion"])


def openai_eval(tmp_path: Path, env: str, answers: list[str]) -> tuple[list[float], list[object]]:
    """``proofgym eval`` of ``env`` on seeds 0.. with the openai policy against a model server that answers
    ``answers`` in turn; each seed's return and the trace the taskset's reward makes of the same completion."""
    with ScriptedModel(answers) as model:
        path = write_eval(tmp_path / f"{env}.toml",
                          {"env_name": env, "policy_name": "openai", "seeds": f"0-{len(answers) - 1}",
                           "concurrency": 1, "traces": str(tmp_path / "traces.db")},
                          {"model": "scripted", "inference_url": model.url, "temperature": 0.0})
        report, actions = proofgym_eval(path)
    assert [result.status for result in report.results] == ["ok"] * len(answers)
    returns = [result.total_return for result in report.results]
    traces = [scored_trace(env, result.seed, [assistant_message(answers[result.seed])]) for result in report.results]
    assert [actions[result.seed] for result in report.results] == [[answer] for answer in answers]
    return returns, traces


def test_a_rulebook_completion_scores_what_proofgym_eval_gave_it(tmp_path: Path) -> None:
    gold = oracle_completion("grant_eligibility", 0)
    wrong = oracle_completion("grant_eligibility", 1).replace('"deny"', '"permit"')
    answers = [gold, wrong, "I would permit this one.", oracle_completion("grant_eligibility", 3)]
    returns, traces = openai_eval(tmp_path, "grant_eligibility", answers)
    assert [trace.reward for trace in traces] == returns
    assert len(set(returns)) >= 3  # certified, refuted and unparseable answers: different rewards, all equal there
    certified = traces[0].info["proofgym"]
    assert certified["outcome"] == "certified" and certified["passed"] is True
    assert certified["certificate_checked"] is True
    evidence = certified["verdict"]["evidence"]
    assert evidence["proof_checked"] is True and "independently certified by the proof checker" in \
        evidence["proof_summary"]
    assert traces[0].metrics["passed"] == 1.0 and traces[1].metrics["passed"] == 0.0
    assert traces[1].info["proofgym"]["passed"] is False
    assert traces[2].info["proofgym"]["outcome"] == "format_error" and traces[2].info["proofgym"]["verdict"] is None


def test_a_math_completion_scores_what_proofgym_eval_gave_it(tmp_path: Path) -> None:
    pytest.importorskip("math_verify")
    answers = [oracle_completion("math", 0), "The answer is \\boxed{12345}.", "no box here"]
    returns, traces = openai_eval(tmp_path, "math", answers)
    assert [trace.reward for trace in traces] == returns
    assert traces[0].info["proofgym"]["outcome"] == "certified" and traces[1].info["proofgym"]["outcome"] == "refuted"


@pytest.mark.parametrize("env", ["verilog", "fact_finding"])
def test_tool_calls_score_what_proofgym_eval_gave_them(tmp_path: Path, env: str) -> None:
    """A tool environment: the oracle's calls, run by ``proofgym eval``, replayed from a verifiers trace."""
    if env == "verilog" and not (shutil.which("iverilog") and shutil.which("bwrap")):
        pytest.skip("the Verilog environment needs iverilog and bubblewrap")
    path = write_eval(tmp_path / f"{env}.toml", {"env_name": env, "policy_name": "oracle", "seeds": "0-1",
                                                 "concurrency": 1, "traces": str(tmp_path / "traces.db")})
    report, actions = proofgym_eval(path)
    for result in report.results:
        assert result.status == "ok" and result.passed
        trace = scored_trace(env, result.seed, [assistant_message(action) for action in actions[result.seed]])
        assert trace.reward == result.total_return
        info = trace.info["proofgym"]
        assert info["outcome_score"] == 1.0 and info["done"] is True and trace.metrics["passed"] == 1.0
        assert [step["action"] for step in info["steps"]] == actions[result.seed]
        if env == "verilog":
            assert info["verdict"]["outcome"] == "certified" and info["verdict"]["evidence"]


def test_a_crafter_episode_scores_what_proofgym_eval_gave_it(tmp_path: Path) -> None:
    """Crafter's heuristic policy for 25 turns (proofgym eval caps the episode; the replay steps the same calls)."""
    pytest.importorskip("crafter")
    path = write_eval(tmp_path / "crafter.toml", {"env_name": "crafter", "policy_name": "crafter-heuristic",
                                                  "seeds": "0", "max_turns": 25, "concurrency": 1,
                                                  "traces": str(tmp_path / "traces.db")})
    report, actions = proofgym_eval(path)
    result = report.results[0]
    assert result.status == "ok" and len(actions[0]) == 25 and result.total_return > 0
    trace = scored_trace("crafter", 0, [assistant_message(action) for action in actions[0]])
    assert trace.reward == result.total_return and trace.info["proofgym"]["done"] is False


def test_a_wrong_tool_call_then_a_text_reply_score_as_in_proofgym(tmp_path: Path) -> None:
    """What the policy cannot read as an action is stepped as none (the environment charges the turn), a tool
    call with bad arguments is the environment's error observation: the same steps as proofgym's loop takes."""
    turns = [assistant_message({"tool": "get_fact", "args": {"name": "no_such_fact"}}),
             assistant_message("I think I know it.")]
    trace = scored_trace("fact_finding", 0, turns)
    steps = trace.info["proofgym"]["steps"]
    assert [step["action"] for step in steps] == [{"tool": "get_fact", "args": {"name": "no_such_fact"}}, None]
    assert trace.info["proofgym"]["done"] is False and trace.reward == sum(step["reward"] for step in steps)


def test_a_call_is_replayed_with_the_arguments_the_tool_server_passed_on(tmp_path: Path) -> None:
    """The MCP tool server drops arguments outside a tool's schema (and a null optional one); the replay does the
    same, so the reward is for the results the model was shown, never for a call the server did not make."""
    with make("fact_finding") as instance:
        instance.reset(0)
        oracle = env_hook(instance, "oracle_actions")(0)
    padded = [{"tool": action["tool"], "args": {**action["args"], "bonus": True}} for action in oracle]
    plain = scored_trace("fact_finding", 0, [assistant_message(action) for action in oracle])
    served = scored_trace("fact_finding", 0, [assistant_message(action) for action in padded])
    assert served.reward == plain.reward and served.info["proofgym"]["done"] is True
    assert [step["action"] for step in served.info["proofgym"]["steps"]] == oracle
