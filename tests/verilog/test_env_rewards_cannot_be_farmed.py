"""Compile and simulate credit is paid once per episode; no action sequence returns more than 1.0."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.verilog import VerilogEnv, VerilogEnvConfig, get_problem

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM = get_problem("Prob001_and_gate")
DESIGN = reference_design(PROBLEM)
SHARES = VerilogEnvConfig().rewards.shares()


def env(**config):
    return VerilogEnv([PROBLEM], config=VerilogEnvConfig(max_turns=100, **config))


def write(content, path="top.v"):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def test_compiling_the_same_design_twenty_times_pays_once():
    with env() as e:
        e.reset(0)
        e.step(write(DESIGN))
        rewards = []
        for _ in range(20):
            rewards.append(e.step({"tool": "compile"}).reward)
            rewards.append(e.step(write(DESIGN)).reward)  # an identical rewrite is the same revision
    assert rewards[0] == SHARES["compile"] and sum(rewards) == SHARES["compile"]


def test_new_revisions_do_not_pay_compile_or_simulate_credit_again():
    with env() as e:
        e.reset(0)
        total = 0.0
        for spaces in range(10):
            result = e.step(write(DESIGN + " " * spaces))  # whitespace changes make new revisions
            revision = result.info["revision"]
            total += result.reward + e.step({"tool": "compile"}).reward + e.step({"tool": "simulate"}).reward
            assert e.step({"tool": "simulate"}).info["revision"] == revision
    assert total == pytest.approx(SHARES["compile"] + SHARES["simulate"])


def test_the_same_revision_has_the_same_hash_and_another_a_different_one():
    with env() as e:
        e.reset(0)
        first = e.step(write(DESIGN)).info["revision"]
        assert e.step(write(DESIGN)).info["revision"] == first
        assert e.step(write(DESIGN + "\n")).info["revision"] != first


def test_compile_pays_only_compile_credit_even_for_a_passing_design():
    # The judge run behind compile also simulates; paying simulate credit there would leak the result.
    with env() as e:
        e.reset(0)
        e.step(write(DESIGN))
        result = e.step({"tool": "compile"})
    assert result.info["reward_components"] == {"compile": SHARES["compile"], "step_penalty": 0.0}
    assert result.info["verdict"]["outcome"] == "certified" and "passed" not in result.observation.data


WRONG = DESIGN.replace("a & b", "a ^ b")
BROKEN = DESIGN.replace("assign", "asign")
actions = st.sampled_from([write(DESIGN), write(WRONG), write(BROKEN), write(DESIGN, "b.v"), write("", "b.v"),
                           {"tool": "compile"}, {"tool": "simulate"}, {"tool": "submit"}, "garbage"])


@settings(max_examples=25, deadline=None)
@given(sequence=st.lists(actions, min_size=1, max_size=8))
def test_no_action_sequence_returns_more_than_one(sequence):
    with VerilogEnv([PROBLEM], config=VerilogEnvConfig(max_turns=8)) as e:
        e.reset(0)
        total, paid = 0.0, []
        for action in sequence:
            result = e.step(action)
            total += result.reward
            paid += [name for name in result.info["reward_components"] if name != "step_penalty"]
            if result.done:
                break
    assert total <= 1.0 + 1e-12
    assert len(paid) == len(set(paid))  # each component at most once
