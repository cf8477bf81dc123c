"""Invariants every registered environment meets, plugins' included (they run for an environment as soon as it is
registered): the oracle's known-good actions earn the top outcome, and a reply that is no answer does not."""

import asyncio

import pytest

from proofgym.envs import env_names
from proofgym.policies import OraclePolicy, ScriptedPolicy
from proofgym.rollouts import run_rollout

SEEDS = (0, 1, 7)
# Environments whose outcome no known action sequence tops (their oracle is a heuristic baseline).
NO_KNOWN_TOP = {"crafter": "the outcome is achievements / 22; its oracle plays the heuristic agent, which unlocks "
                            "about 9 of them"}


def _skip_if_not_judged(result):
    reason = result.invalid_reason
    if reason is not None and "not installed" in reason:
        pytest.skip(f"{result.session.env_name}: {reason}")


@pytest.mark.parametrize("name", env_names())
def test_the_oracle_earns_the_top_outcome(name):
    if name in NO_KNOWN_TOP:
        pytest.skip(f"{name}: {NO_KNOWN_TOP[name]}")
    policy = OraclePolicy(name)
    try:
        for seed in SEEDS:
            result = asyncio.run(run_rollout(name, seed=seed, policy=policy))
            _skip_if_not_judged(result)
            assert result.status == "ok", result.session.error
            assert result.outcome_score == 1.0, (name, seed, result.session.steps[-1].info)
    finally:
        asyncio.run(policy.aclose())


@pytest.mark.parametrize("name", env_names())
def test_a_reply_that_is_no_answer_does_not(name):
    for seed in SEEDS:
        policy = ScriptedPolicy(["I would rather not say."] * 50)
        result = asyncio.run(run_rollout(name, seed=seed, policy=policy, max_turns=50))
        assert result.outcome_score != 1.0, (name, seed)


def _text_answer_names():
    # Every environment that takes its answer as plain text (SingleAnswerEnv's, plugins' included).
    from proofgym.envs import make

    names = []
    for name in env_names():
        with make(name) as env:
            if getattr(env, "accepts_text", False):
                names.append(name)
    return names


@pytest.mark.parametrize("name", _text_answer_names())
def test_a_single_answer_environment_reads_its_answer_the_same_in_every_form(name):
    # The answer as a tool call, as text, as UTF-8 bytes (a task app's raw body), or as a JSON tool call: one
    # reward. Two copies of the plain-text rule once drifted, and math scored its oracle's bytes as no_answer.
    import json

    from proofgym.envs import make

    with make(name) as env:
        [call] = env.oracle_actions(3)
        completion = call["args"]["completion"]
        forms = [call, json.dumps(call), completion, completion.encode("utf-8"), bytearray(completion.encode())]
        results = []
        for action in forms:
            env.reset(3)
            result = env.step(action)
            results.append((result.reward, result.info.get("outcome"), result.done, "error" in result.info))
    _skip_if_not_judged_step(results)
    assert all(r == results[0] for r in results), (name, results)
    assert results[0][1] == "certified" and not results[0][3]


def _skip_if_not_judged_step(results):
    if results[0][1] == "invalid":
        pytest.skip("the verifier could not run here")
