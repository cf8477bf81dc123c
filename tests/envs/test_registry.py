import pytest

from proofgym.envs import env_names, make, register_env
from proofgym.envs import ENVIRONMENTS
from ._support import CounterEnv


@pytest.fixture
def registered():
    register_env("counter-test", CounterEnv)
    register_env("counter-lazy-test", f"{CounterEnv.__module__}:CounterEnv")
    yield
    ENVIRONMENTS.unregister("counter-test")
    ENVIRONMENTS.unregister("counter-lazy-test")


def test_make_builds_a_fresh_instance_with_the_config(registered):
    first, second = make("counter-test", max_turns=2), make("counter-test")
    assert first is not second and first._max_turns == 2
    assert isinstance(make("counter-lazy-test"), CounterEnv)
    assert {"counter-test", "counter-lazy-test", "verilog"} <= set(env_names())


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown environment 'nope'.*verilog"):
        make("nope")


def test_a_name_is_registered_once(registered):
    with pytest.raises(ValueError, match="already registered"):
        register_env("counter-test", CounterEnv)


def test_importing_envs_does_not_import_the_verilog_package():
    import subprocess
    import sys

    code = "import sys, proofgym.envs; print('proofgym.verilog' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_quick_to_make_asks_the_factory_and_assumes_blocking_otherwise(registered):
    from proofgym.envs import quick_to_make
    from proofgym.envs import ENVIRONMENTS

    class Quick:
        def __call__(self, **config):
            return CounterEnv(**config)

        def builds_quickly(self, **config):
            return config.get("max_turns") == 2

    register_env("counter-quick-test", Quick())
    try:
        assert quick_to_make("counter-quick-test", max_turns=2)
        assert not quick_to_make("counter-quick-test", max_turns=3)
        assert not quick_to_make("counter-test")  # no builds_quickly: building may block
        assert not quick_to_make("counter-lazy-test")  # not imported yet
        assert not quick_to_make("nope")
    finally:
        ENVIRONMENTS.unregister("counter-quick-test")
