"""Where an environment's calls run: pooled worker threads for environments that may block, the event loop
itself for environments that say they never block (and factories that say building is quick)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from proofgym.envs import register_env
from proofgym.envs import ENVIRONMENTS
from proofgym.policies import ScriptedPolicy
from proofgym.rollouts import run_rollout

from ._support import CounterEnv

FINISH = [{"tool": "add", "args": {"n": 2}}, {"tool": "finish"}]


class InlineCounterEnv(CounterEnv):
    blocking = False


class QuickFactory:
    """Builds counters; says building is quick, and records the threads it built on."""

    def __init__(self, env_class: type[CounterEnv]) -> None:
        self.env_class = env_class
        self.threads: list[str] = []

    def __call__(self, **config):
        self.threads.append(threading.current_thread().name)
        return self.env_class(**config)

    def builds_quickly(self, **config) -> bool:
        return True


@pytest.fixture
def registered():
    names = []

    def register(name, factory):
        register_env(name, factory)
        names.append(name)
        return name

    CounterEnv.instances = []
    yield register
    for name in names:
        ENVIRONMENTS.unregister(name)


def rollouts(env_name: str, n: int) -> list:
    async def main():
        return [await run_rollout(env_name, seed=2, policy=ScriptedPolicy(FINISH)) for _ in range(n)]

    return asyncio.run(main())


def test_an_environment_that_may_block_runs_on_reused_worker_threads(registered):
    name = registered("counter-threads-test", CounterEnv)
    rollouts(name, 1)
    before = threading.active_count()
    results = rollouts(name, 12)
    assert all(result.status == "ok" and result.outcome_score == 1.0 for result in results)
    threads = set().union(*(env.step_threads for env in CounterEnv.instances))
    assert threading.main_thread().name not in threads
    assert all(name.startswith("proofgym-env") for name in threads)
    assert threading.active_count() <= before + 1  # the pool's threads are reused: not one thread per rollout
    assert all(env.closed_at is not None for env in CounterEnv.instances)


def test_an_environment_that_never_blocks_runs_on_the_event_loop(registered):
    factory = QuickFactory(InlineCounterEnv)
    name = registered("counter-inline-test", factory)
    results = rollouts(name, 3)
    assert all(result.status == "ok" and result.outcome_score == 1.0 for result in results)
    main = threading.main_thread().name
    assert factory.threads == [main] * 3  # built on the loop: the factory said it is quick
    assert all(env.step_threads == {main} and env.closed_at is not None for env in CounterEnv.instances)


def test_a_factory_without_builds_quickly_builds_off_the_loop(registered):
    factory = QuickFactory(InlineCounterEnv)
    factory.builds_quickly = lambda **config: False
    name = registered("counter-slow-build-test", factory)
    [result] = rollouts(name, 1)
    assert result.status == "ok"
    assert factory.threads[0].startswith("proofgym-env")
    assert CounterEnv.instances[0].step_threads == {threading.main_thread().name}  # the env's own calls: inline


def test_a_step_abandoned_by_the_time_budget_is_closed_after_it_finishes(registered):
    name = registered("counter-abandoned-test", CounterEnv)

    async def main():
        return await run_rollout(name, seed=1, policy=ScriptedPolicy([{"tool": "wait", "args": {"s": 3}}]),
                                 max_time_s=0.1)

    result = asyncio.run(main())
    assert result.status == "timeout"
    env = CounterEnv.instances[0]
    assert asyncio.run(_wait_closed(env)), "the environment was not closed after its abandoned step"


async def _wait_closed(env: CounterEnv) -> bool:
    for _ in range(100):
        if env.closed_at is not None:
            return True
        await asyncio.sleep(0.02)
    return False
