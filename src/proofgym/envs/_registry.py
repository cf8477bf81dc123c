"""Environments by name: ``register_env`` once, ``make`` per rollout."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Union

from proofgym.envs._core import Environment

EnvFactory = Callable[..., Environment]

# A factory, or "package.module:attribute" naming one, imported on the first make() so that
# registering an environment does not import its (possibly heavy) package.
_FACTORIES: dict[str, Union[EnvFactory, str]] = {}


def register_env(name: str, factory: EnvFactory | str) -> None:
    """Register an environment: ``factory(**config)`` builds one instance.

    ``factory`` may be a callable or a ``"module:attribute"`` string resolved on first use. A factory
    may also have ``builds_quickly(**config) -> bool``: true when building that config now is short
    CPU work that never waits, so a rollout loop may build it on its event loop (see :func:`quick_to_make`).
    """
    if name in _FACTORIES:
        raise ValueError(f"environment {name!r} is already registered")
    if isinstance(factory, str) and factory.count(":") != 1:
        raise ValueError(f"factory for environment {name!r} must be a callable or 'module:attribute', got {factory!r}")
    _FACTORIES[name] = factory


def env_names() -> list[str]:
    """The registered environment names, sorted."""
    return sorted(_FACTORIES)


def make(name: str, **config: Any) -> Environment:
    """Build a fresh instance of environment ``name``; ``config`` goes to its factory."""
    return _factory(name)(**config)


def quick_to_make(name: str, **config: Any) -> bool:
    """Whether ``make(name, **config)`` is short CPU work now (its factory's ``builds_quickly`` says so).

    ``False`` for an unknown name, a factory not imported yet, or one without ``builds_quickly``:
    building is then assumed to block (I/O, compiling, starting processes).
    """
    factory = _FACTORIES.get(name)
    check = None if factory is None or isinstance(factory, str) else getattr(factory, "builds_quickly", None)
    return bool(check(**config)) if callable(check) else False


def _factory(name: str) -> EnvFactory:
    if name not in _FACTORIES:
        raise ValueError(f"unknown environment {name!r}; expected one of {env_names()}")
    factory = _FACTORIES[name]
    if isinstance(factory, str):
        module, _, attribute = factory.partition(":")
        factory = getattr(importlib.import_module(module), attribute)
        _FACTORIES[name] = factory
    return factory
