"""Environments by name: ``register_env`` once, ``make`` per rollout."""

from __future__ import annotations

from typing import Any, Callable, cast

from proofgym.core import Registry
from proofgym.envs._core import Environment
from proofgym.envs._splits import SplitEnv, split_selection

EnvFactory = Callable[..., Environment]


def _check_factory(value: Any) -> EnvFactory:
    if not callable(value):
        raise TypeError(f"expected an environment factory (a callable), got {type(value).__name__}")
    return cast(EnvFactory, value)


#: Environments by name. Built-in ones and plugins' (the ``proofgym.envs`` entry-point group) are factories or
#: ``"module:attribute"`` strings naming one, imported on the first ``make()`` so that registering an environment
#: does not import its (possibly heavy) package.
ENVIRONMENTS: Registry[EnvFactory] = Registry("environment", "proofgym.envs", check=_check_factory)


def register_env(name: str, factory: EnvFactory | str) -> None:
    """Register an environment: ``factory(**config)`` builds one instance.

    ``factory`` may be a callable or a ``"module:attribute"`` string resolved on first use. A factory
    may also have ``builds_quickly(**config) -> bool``: true when building that config now is short
    CPU work that never waits, so a rollout loop may build it on its event loop (see :func:`quick_to_make`).
    """
    ENVIRONMENTS.register(name, factory)


#: What reports the verdict caches environments share (see :func:`verification_cache_usage`).
_CACHE_REPORTERS: list[Callable[[], list[dict[str, Any]]]] = []


def report_verification_caches(reporter: Callable[[], list[dict[str, Any]]]) -> None:
    """Add ``reporter``, which lists the verdict caches an environment module's instances share (one dict each:
    ``entries``, ``approx_bytes``, ``max_bytes``, ``evictions`` and what identifies the cache), to what
    :func:`verification_cache_usage` reports. Called by the module when it is imported."""
    if reporter not in _CACHE_REPORTERS:
        _CACHE_REPORTERS.append(reporter)


def verification_cache_usage() -> list[dict[str, Any]]:
    """The verdict caches this process's environments share (the rulebook environments': one per domain and run
    config): entries, estimated bytes, the bound, evictions. Empty until an environment that shares one has been
    built; loads none."""
    return [usage for reporter in list(_CACHE_REPORTERS) for usage in reporter()]


def env_names() -> list[str]:
    """The registered environment names (plugins' included), sorted."""
    return ENVIRONMENTS.names()


def make(name: str, **config: Any) -> Environment:
    """Build a fresh instance of environment ``name``; ``config`` goes to its factory.

    ``split`` (train / val / test) and ``index`` are read here, for every environment, and never reach the
    factory: with a ``split`` the instance is a :class:`~proofgym.envs.SplitEnv`, whose seeds are positions in
    that split (see :mod:`proofgym.envs._splits`). Raises :class:`~proofgym.core.ConfigError` naming the key
    for an invalid one.
    """
    selection, rest = split_selection(config)
    env = ENVIRONMENTS.get(name)(**rest)
    return env if selection is None else SplitEnv(env, selection)


def quick_to_make(name: str, **config: Any) -> bool:
    """Whether ``make(name, **config)`` is short CPU work now (its factory's ``builds_quickly`` says so).

    ``False`` for an unknown name, a factory not imported yet, or one without ``builds_quickly``:
    building is then assumed to block (I/O, compiling, starting processes).
    """
    factory = ENVIRONMENTS.target(name)
    check = None if factory is None or isinstance(factory, str) else getattr(factory, "builds_quickly", None)
    if not callable(check):
        return False
    try:
        _, rest = split_selection(config)
    except ValueError:
        return False  # make() raises it, wherever it runs
    return bool(check(**rest))
