"""Rulebook domains as registered environments, without importing the domains until one is made."""

from __future__ import annotations

from typing import Any

from proofgym.envs import Environment, register_env

# The domains proofgym ships (proofgym.domains); a test keeps this list equal to the registry's.
SHIPPED_RULEBOOK_DOMAINS = ("grant_eligibility", "loan")


class RulebookEnvFactory:
    """``factory(**config)`` builds a :class:`~proofgym.domains.RulebookEnv` of one domain (imported on first
    call)."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self._default_built = False

    def __call__(self, **config: Any) -> Environment:
        from proofgym.domains._env import make_rulebook_env

        env = make_rulebook_env(self.domain, **config)
        if config.get("run_config") is None and "reward_function" not in config:
            self._default_built = True
        return env

    def builds_quickly(self, **config: Any) -> bool:
        """True for the domain's default reward path once a build has loaded and compiled it (a build
        then reuses it). A ``run_config`` file is read (and rebuilt when it changed) on each build: not quick."""
        return self._default_built and config.get("run_config") is None and "reward_function" not in config

    def __repr__(self) -> str:
        return f"RulebookEnvFactory({self.domain!r})"


def register_rulebook_env(domain: str, name: str | None = None) -> None:
    """Register the single-turn environment of rulebook domain ``domain`` (a name ``get_domain`` knows)
    under ``name`` (default: the domain's name)."""
    register_env(name or domain, RulebookEnvFactory(domain))


#: The shipped domains' environments, registered through the ``proofgym.envs`` entry points (pyproject.toml).
GRANT_ELIGIBILITY_ENV = RulebookEnvFactory("grant_eligibility")
LOAN_ENV = RulebookEnvFactory("loan")
