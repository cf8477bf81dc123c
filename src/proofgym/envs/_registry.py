"""Environments by name: ``register_env`` once, ``make`` per rollout."""

from __future__ import annotations

from typing import Any, Callable

from proofgym.core import Registry
from proofgym.envs._core import Environment

EnvFactory = Callable[..., Environment]


def _check_factory(value: Any) -> EnvFactory:
    if not callable(value):
        raise TypeError(f"expected an environment factory (a callable), got {type(value).__name__}")
    return value


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


def env_names() -> list[str]:
    """The registered environment names (plugins' included), sorted."""
    return ENVIRONMENTS.names()


def make(name: str, **config: Any) -> Environment:
    """Build a fresh instance of environment ``name``; ``config`` goes to its factory."""
    return ENVIRONMENTS.get(name)(**config)


def quick_to_make(name: str, **config: Any) -> bool:
    """Whether ``make(name, **config)`` is short CPU work now (its factory's ``builds_quickly`` says so).

    ``False`` for an unknown name, a factory not imported yet, or one without ``builds_quickly``:
    building is then assumed to block (I/O, compiling, starting processes).
    """
    factory = ENVIRONMENTS.target(name)
    check = None if factory is None or isinstance(factory, str) else getattr(factory, "builds_quickly", None)
    return bool(check(**config)) if callable(check) else False
