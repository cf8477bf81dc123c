"""The oracle earns every environment's top outcome on every seed: a test of the environments themselves."""

import asyncio

import pytest

from proofgym.domains import domain_names
from proofgym.envs import ENVIRONMENTS, env_names, register_env
from proofgym.policies import OraclePolicy, PolicyRequest
from proofgym.rollouts import run_rollout

from ._support import requires_judge


def rollout(env_name, seed, policy, **options):
    return asyncio.run(run_rollout(env_name, seed=seed, policy=policy, **options))


@pytest.mark.parametrize("name", env_names())
def test_every_registered_environment_has_an_oracle(name):
    policy = OraclePolicy(name)  # refused (ValueError) for an environment without oracle_actions
    asyncio.run(policy.aclose())


@pytest.mark.parametrize("name", domain_names())
def test_the_oracle_earns_the_top_outcome_of_a_rulebook_environment(name):
    policy = OraclePolicy(name)
    for seed in (0, 1, 2, 3, 10, 123):
        result = rollout(name, seed, policy)
        assert result.status == "ok" and result.length == 1
        assert result.total_return == pytest.approx(2.1) and result.outcome_score == 1.0
        assert result.verdict["outcome"] == "certified"
    asyncio.run(policy.aclose())


@requires_judge
def test_the_oracle_earns_the_top_outcome_of_the_verilog_environment():
    # Seeds 0, 5 and 18: the and-gate, the 4-bit adder, the synchronous-reset flip-flop (problem s mod 38).
    policy = OraclePolicy("verilog")
    for seed in (0, 5, 18):
        result = rollout("verilog", seed, policy)
        assert result.status == "ok" and result.length == 2
        assert result.total_return == pytest.approx(1.0) and result.outcome_score == 1.0
        assert [s.env_event.tool for s in result.session.steps] == ["write_file", "submit"]
    asyncio.run(policy.aclose())


def test_the_oracle_follows_the_environment_config():
    policy = OraclePolicy("loan", {"seed_offset": 500, "chat": False})
    result = rollout("loan", 4, policy, env_config={"seed_offset": 500, "chat": False})
    assert result.outcome_score == 1.0
    mismatched = rollout("loan", 4, policy)  # the oracle's answer is for another record
    assert mismatched.outcome_score == 0.0
    asyncio.run(policy.aclose())


def test_the_oracle_needs_the_seed():
    reply = asyncio.run(OraclePolicy("grant_eligibility").act(PolicyRequest(messages=[])))
    assert reply.unavailable and "seed" in reply.error


def test_an_environment_without_an_oracle_is_refused():
    from proofgym.envs import Observation, Tool, ToolEnv, ToolResult

    class Plain(ToolEnv):
        def __init__(self):
            super().__init__([Tool("noop", "Do nothing.")], max_turns=1)

        def _reset(self, seed):
            return Observation("hi")

        def _call_tool(self, call):
            return ToolResult(Observation("ok"), done=True)

    register_env("plain-oracle-test", Plain)
    try:
        with pytest.raises(ValueError, match="no oracle for environment 'plain-oracle-test'"):
            OraclePolicy("plain-oracle-test")
    finally:
        ENVIRONMENTS.unregister("plain-oracle-test")
