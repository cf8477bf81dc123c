"""A rulebook environment scores the one answer through the domain's real reward path and ends the episode."""

import json

import pytest

from proofgym.domains import domain_names, gold_completion
from proofgym.domains import RulebookEnv, default_run_config
from proofgym.envs import make
from proofgym.rewards import DefaultRewardShaper, RewardFunction
from proofgym.runtime import VerificationRuntime
from proofgym.testing import FakeVerifier, Fault

CEILING = 2.1  # the sum of the default weights


def other_decision(env, completion):
    block = completion[completion.index("<decision>") + len("<decision>"):completion.index("</decision>")]
    current = json.loads(block)
    wrong = next(d for d in env.domain.spec.decisions if d != current["classification"])
    return completion.replace(f'"classification": "{current["classification"]}"', f'"classification": "{wrong}"')


@pytest.mark.parametrize("name", domain_names())
@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_the_gold_completion_earns_the_top_reward_and_ends_the_episode(name, seed):
    with make(name) as env:
        env.reset(seed)
        result = env.step({"tool": "answer", "args": {"completion": gold_completion(env.domain, env.record)}})
    assert result.done and not result.truncated
    assert result.reward == pytest.approx(CEILING)
    info = result.info
    assert info["outcome"] == "certified" and info["correct"] is True and info["passed"] is True
    assert info["verdict"]["outcome"] == "certified" and info["verdict"]["evidence"]["proof_checked"] is True
    assert info["claimed_decision"] == info["gold"] and info["branch"] == env.record.branch
    assert sum(info["reward_components"].values()) == result.reward
    assert info["abstained"] is False


def test_plain_text_is_the_completion_itself():
    with make("loan") as env:
        env.reset(4)
        gold = gold_completion(env.domain, env.record)
        as_text = env.step(gold)
        env.reset(4)
        as_call = env.step(json.dumps({"tool": "answer", "args": {"completion": gold}}))
    assert as_text.reward == as_call.reward == pytest.approx(CEILING)
    assert as_text.info["verdict"]["decision"] == as_call.info["verdict"]["decision"]


def test_a_wrong_decision_scores_below_the_gold_one_and_is_not_correct():
    with make("grant_eligibility") as env:
        env.reset(0)
        wrong = other_decision(env, gold_completion(env.domain, env.record))
        result = env.step(wrong)
    assert result.done and result.reward < CEILING - 1.0
    assert result.info["correct"] is False and result.info["passed"] is False
    assert result.info["claimed_decision"] != result.info["gold"]


def test_a_completion_that_does_not_parse_scores_the_floor():
    with make("loan") as env:
        env.reset(1)
        result = env.step("I think the loan should be approved.")
    assert result.done and result.reward == -1.0
    assert result.info["outcome"] == "format_error" and result.info["verdict"] is None
    assert result.info["reward_components"]["format_failure"] == -1.0


@pytest.mark.parametrize("action", [{"tool": "submit"}, {"tool": "answer", "args": {}}, None, 42,
                                    '{"tool": "answer", "args": {"completion": 3}}'])
def test_a_malformed_call_on_the_only_turn_scores_the_floor_not_zero(action):
    with make("grant_eligibility") as env:
        env.reset(2)
        result = env.step(action)
    assert result.done and result.truncated
    assert result.reward == -1.0 and result.info["outcome"] == "no_answer"
    assert result.observation.text.startswith("Error:") and result.info["error"]


def test_with_more_turns_a_malformed_call_can_be_followed_by_the_answer():
    with make("loan", max_turns=2) as env:
        env.reset(3)
        first = env.step({"tool": "nope"})
        second = env.step(gold_completion(env.domain, env.record))
    assert not first.done and first.reward == 0.0 and "unknown tool" in first.info["error"]
    assert second.done and second.reward == pytest.approx(CEILING)


def test_an_invalid_verification_abstains_with_reward_zero():
    run = default_run_config("loan")
    verifier = FakeVerifier(fault=lambda claim: Fault.INVALID)
    reward_fn = RewardFunction(run.parser.build(), VerificationRuntime(verifier), DefaultRewardShaper(run.reward))
    with make("loan", reward_function=reward_fn) as env:
        env.reset(0)
        result = env.step(gold_completion(env.domain, env.record))
    assert result.done and result.reward == 0.0
    assert result.info["abstained"] is True and result.info["outcome"] == "invalid"
    assert result.info["verdict"]["outcome"] == "invalid"
    # A shared reward function is not the environment's to close.
    assert reward_fn([None], ["x"], [None]) == [-1.0]
    reward_fn.close()


def test_instances_share_one_reward_function_per_run_config_and_closing_one_keeps_it_open(tmp_path):
    first, second = RulebookEnv("grant_eligibility"), make("grant_eligibility", chat=False)
    assert first.reward_function is second.reward_function
    assert make("loan").reward_function is not first.reward_function
    first.close()
    second.reset(0)
    assert second.step(gold_completion(second.domain, second.record)).reward == pytest.approx(CEILING)
    config = tmp_path / "run.yaml"
    config.write_text("verifier: {kind: rulebook, domain: grant_eligibility}\n")
    own = make("grant_eligibility", run_config=str(config))
    assert own.reward_function is not first.reward_function
    assert make("grant_eligibility", run_config=str(config)).reward_function is own.reward_function
