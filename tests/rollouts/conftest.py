import pytest

from proofgym.envs import register_env
from proofgym.envs import ENVIRONMENTS

from ._support import CounterEnv


@pytest.fixture
def counter_env():
    """The counter environment registered as ``counter-rollout-test``."""
    CounterEnv.instances = []
    register_env("counter-rollout-test", CounterEnv)
    yield "counter-rollout-test"
    ENVIRONMENTS.unregister("counter-rollout-test")
