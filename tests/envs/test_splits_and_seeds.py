"""``split`` / ``index`` in every environment's config: disjoint, deterministic splits of its seeds, read by
``make`` itself, and how they combine with the seed."""

import pytest

from proofgym.core import ConfigError
from proofgym.envs import (
    SPLITS,
    BlockPartition,
    SplitEnv,
    TaskPartition,
    env_names,
    make,
    quick_to_make,
    register_env,
    seed_partition,
)
from proofgym.envs._registry import ENVIRONMENTS

from ._support import CounterEnv


@pytest.fixture
def counter():
    register_env("counter_for_splits", lambda **config: CounterEnv(**config))
    yield "counter_for_splits"
    ENVIRONMENTS.unregister("counter_for_splits")


@pytest.mark.parametrize("name", env_names())
def test_every_environment_has_disjoint_deterministic_splits(name):
    seen: dict[int, str] = {}
    for split in SPLITS:
        with make(name, split=split) as env:
            assert isinstance(env, SplitEnv)
            seeds = [env.env_seed(i) for i in range(40)]
            assert seeds == [env.env_seed(i) for i in range(40)]  # deterministic
            assert all(env.partition.split_of(seed) == split for seed in seeds)
            first = env.reset(0)
            assert first.data["split"] == split and first.data["index"] == 0
            assert first.data["env_seed"] == seeds[0]
            with make(name) as plain:  # the split's i-th task is the plain environment's task of that seed
                assert plain.reset(seeds[0]).text == first.text
        for seed in seeds:
            assert seen.setdefault(seed, split) == split  # no seed is in two splits


def test_the_default_partition_is_by_seed_mod_10(counter):
    with make(counter, split="train") as train, make(counter, split="val") as val, make(counter, split="test") as test:
        assert seed_partition(CounterEnv()) == BlockPartition(1)
        assert [train.env_seed(i) for i in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 10, 11]
        assert [val.env_seed(i) for i in range(3)] == [8, 18, 28]
        assert [test.env_seed(i) for i in range(3)] == [9, 19, 29]
        assert test.reset(2).data["target"] == 29  # the wrapped environment was reset with seed 29


def test_index_is_the_position_in_the_split_and_the_seed_must_agree(counter):
    with make(counter, split="val", index=2) as env:
        assert env.reset(2).data["env_seed"] == 28
        with pytest.raises(ConfigError, match=r"index \(2\) and the seed \(5\)") as info:
            env.reset(5)
        assert info.value.problems[0]["loc"] == ("index",)


def test_without_a_split_the_seed_is_the_environments_own_and_index_is_refused(counter):
    with make(counter) as env:
        assert not isinstance(env, SplitEnv) and env.reset(9).data == {"target": 9}
    with pytest.raises(ConfigError, match="index is a position within a split") as info:
        make(counter, index=3)
    assert info.value.problems[0]["loc"] == ("index",)


@pytest.mark.parametrize(("config", "key", "expected"), [
    ({"split": "validation"}, "split", "expected one of train, val, test"),
    ({"split": 1}, "split", "expected one of train, val, test"),
    ({"split": "test", "index": -1}, "index", "expected an integer"),
    ({"split": "test", "index": True}, "index", "expected an integer"),
    ({"split": "test", "index": "3"}, "index", "expected an integer"),
])
def test_bad_split_keys_name_the_key_and_what_was_expected(counter, config, key, expected):
    with pytest.raises(ConfigError, match=expected) as info:
        make(counter, **config)
    assert info.value.problems[0]["loc"] == (key,) and info.value.problems[0]["input"] == config[key]


def test_the_factory_never_sees_the_split_keys(counter):
    # CounterEnv takes no split or index: had make passed them on, it would raise TypeError.
    with make(counter, split="test", index=0, max_turns=3) as env:
        assert env.env._max_turns == 3
        assert env.closed_count == 0  # other attributes are the wrapped environment's
        assert env.tools == CounterEnv().tools


def test_quick_to_make_reads_the_config_without_the_split_keys():
    class Quick:
        def __call__(self, **config):
            return CounterEnv(**config)

        def builds_quickly(self, **config):
            assert "split" not in config and "index" not in config
            return True

    register_env("quick_counter_for_splits", Quick())
    try:
        assert quick_to_make("quick_counter_for_splits", split="test", index=1)
        assert not quick_to_make("quick_counter_for_splits", split="nope")
    finally:
        ENVIRONMENTS.unregister("quick_counter_for_splits")


def test_the_oracle_plays_the_splits_seed():
    with make("parity", split="test") as env, make("parity") as plain:
        assert env.oracle_actions(3) == plain.oracle_actions(env.env_seed(3))


def test_a_finite_task_set_cycles_through_its_splits_tasks():
    partition = TaskPartition(("train", "test", "train", "val", "test"))
    assert [partition.seed_at("test", i) for i in range(5)] == [1, 4, 6, 9, 11]
    assert [partition.split_of(seed) for seed in (6, 9, 11)] == ["test", "test", "test"]
    assert partition.size("train") == 2 and partition.size("val") == 1
    empty = TaskPartition(("train", "test"))
    with pytest.raises(ValueError, match="holds no task"):
        empty.seed_at("val", 0)
    with pytest.raises(ValueError, match="unknown split"):
        TaskPartition(("train", "dev"))


def test_a_split_with_no_task_is_refused_when_the_environment_is_built(counter):
    class TwoTasks(CounterEnv):
        seed_partition = TaskPartition(("train", "test"))

    register_env("two_tasks_for_splits", lambda **config: TwoTasks(**config))
    try:
        with pytest.raises(ConfigError, match=r"no task in split 'val' \(tasks per split: train 1, val 0, test 1\)"):
            make("two_tasks_for_splits", split="val")
    finally:
        ENVIRONMENTS.unregister("two_tasks_for_splits")
