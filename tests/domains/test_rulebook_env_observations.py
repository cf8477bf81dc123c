"""What a rulebook environment shows: the domain's prompt for a record the seed fixes, never the answer."""

import json

import pytest

from proofgym.domains import build_example, domain_names, get_domain, gold_completion
from proofgym.envs import make
from proofgym.domains import balance_period
from proofgym.domains import build_system_prompt


@pytest.fixture(params=domain_names())
def env(request):
    with make(request.param) as environment:
        yield environment


def test_the_observation_is_the_domain_prompt_for_the_seeds_record(env):
    observation = env.reset(7)
    record = env.record
    assert observation.text == env.domain.render(record)
    assert observation.data["system"] == build_system_prompt(env.domain.spec)
    assert observation.data["messages"] == build_example(env.domain, record, chat=True)["prompt"]
    assert observation.data["domain"] == env.domain.name and observation.data["seed"] == 7
    assert env.tools[0]["function"]["name"] == "answer"


def test_the_observation_never_holds_the_gold_answer(env):
    for seed in range(6):
        observation = env.reset(seed)
        shown = json.dumps(observation.to_dict())
        gold = gold_completion(env.domain, env.record)
        decision_block = gold[gold.index(f"<{env.domain.spec.tag}>"):]
        assert decision_block not in shown
        assert "gold" not in shown and "branch" not in observation.data


def test_the_same_seed_gives_the_same_record_and_observation():
    with make("loan") as first, make("loan") as second:
        assert first.reset(12).to_dict() == second.reset(12).to_dict()
        assert first.record == second.record
        assert first.reset(13).to_dict() != second.reset(12).to_dict()


@pytest.mark.parametrize("name", domain_names())
def test_consecutive_seeds_cover_every_branch_of_the_domain(name):
    domain = get_domain(name)
    period = balance_period(domain)
    with make(name) as env:
        branches = [env.record_for(seed).branch for seed in range(period)]
    assert set(branches) == set(domain.branches)


def test_the_first_period_of_seeds_is_the_domains_dataset():
    domain = get_domain("loan")
    period = balance_period(domain)
    with make("loan") as env:
        assert [env.record_for(seed) for seed in range(period)] == domain.generate(0, period)
        assert [env.record_for(seed) for seed in range(period, 2 * period)] == domain.generate(1, period)


def test_a_seed_offset_draws_other_records():
    with make("grant_eligibility") as plain, make("grant_eligibility", seed_offset=1000) as shifted:
        assert plain.record_for(1000) == shifted.record_for(0)
        assert plain.record_for(0) != shifted.record_for(0)


def test_without_chat_the_prompt_is_one_user_message():
    with make("grant_eligibility", chat=False) as env:
        observation = env.reset(3)
        expected = build_example(env.domain, env.record, chat=False)["prompt"]
    assert observation.text == expected and observation.data["system"] is None
    assert observation.data["messages"] == [{"role": "user", "content": expected}]
