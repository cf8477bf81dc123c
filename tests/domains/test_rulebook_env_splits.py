"""The rulebook environments' splits: whole balance periods, so each split is balanced over decisions and rule
branches, and the test split shares no seed with train."""

from collections import Counter

import pytest

from proofgym.domains import get_domain
from proofgym.envs import SPLITS, make
from proofgym.domains import balance_period


@pytest.mark.parametrize("domain", ["grant_eligibility", "loan"])
def test_every_split_is_balanced_over_decisions_and_branches(domain):
    period = balance_period(get_domain(domain))
    with make(domain) as plain:  # one period of the generator: its balance schedule, once
        schedule = Counter(plain.record_for(seed).branch for seed in range(period))
    assert set(schedule) == set(get_domain(domain).branches)
    for split in SPLITS:
        with make(domain, split=split) as env:
            assert env.partition.block == period
            for start in (0, 3 * period):
                seeds = [env.env_seed(i) for i in range(start, start + period)]
                assert Counter(env.record_for(seed).branch for seed in seeds) == schedule


def test_test_seeds_are_never_train_seeds():
    with make("grant_eligibility", split="train") as train, make("grant_eligibility", split="test") as test:
        train_seeds = {train.env_seed(i) for i in range(2000)}
        test_seeds = {test.env_seed(i) for i in range(250)}
    assert not train_seeds & test_seeds
    assert sorted(test_seeds)[:3] == [72, 73, 74]  # block 9 of 8 seeds


def test_the_split_composes_with_seed_offset():
    with make("grant_eligibility", split="val", seed_offset=5) as env:
        first = env.reset(0)
        assert first.data["env_seed"] == 64 and first.data["seed"] == 64
        assert env.record.id == env.record_for(64).id
