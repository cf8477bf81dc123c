"""proofgym: auditable, hack-resistant verifiable rewards for LLM post-training.

The top level is a short list; each name is loaded on first use, so ``import proofgym`` imports nothing else::

    import proofgym as pg

    env = pg.make("grant_eligibility", split="train")        # an environment by name
    config = pg.load_config("configs/run/grant_eligibility.yaml")  # any config file, as its kind's model
    reward = config.reward_function()                          # a pg.RewardFunction: prompts, completions -> rewards

Environments, verifiers and rubric criteria are registered by name (``register_*``, or a plugin's entry points in
the groups ``proofgym.envs``, ``proofgym.verifiers``, ``proofgym.criteria``).

- :func:`make`: build an environment by its registered name (:func:`proofgym.envs.make`).
- :func:`load_config`: read a config file of any kind (run, eval, rl) into that kind's model.
- :class:`RewardFunction`: a run config's reward path, ``reward_fn(prompts, completions, refs)``.
- :func:`register_env`: register an environment factory under a name.
- :func:`register_verifier`: register a verifier kind (its options model and builder).
- :func:`register_criterion`: register a programmatic rubric criterion (also a decorator).
- :class:`Environment`: the environment protocol (``reset`` / ``step`` and the optional hooks).
- :class:`StepResult`: what an environment's ``step`` returns.
- :class:`Verifier`: the verifier protocol (claims in, verdicts out).
- :class:`Claim`: one checkable statement parsed from a completion.
- :class:`Verdict`: a verifier's judgement of one claim.
- :class:`Outcome`: a verdict's outcome (certified, refuted or invalid).
- :class:`ErrorKind`: why a verdict is invalid (timeout, crash, malformed, ...).
- :class:`RejectedFact`: a fact of a claim that a verifier refused, and why.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module it is loaded from, on first use.
_LAZY: dict[str, str] = {
    "make": "proofgym.envs",
    "RewardFunction": "proofgym.rewards",
    "register_env": "proofgym.envs",
    "register_verifier": "proofgym.verifiers",
    "register_criterion": "proofgym.judges",
    "Environment": "proofgym.envs",
    "StepResult": "proofgym.envs",
    "Verifier": "proofgym.verifiers",
    "Claim": "proofgym.core",
    "Verdict": "proofgym.core",
    "Outcome": "proofgym.core",
    "ErrorKind": "proofgym.core",
    "RejectedFact": "proofgym.core",
}

__all__ = [
    "Claim", "Environment", "ErrorKind", "Outcome", "RejectedFact", "RewardFunction", "StepResult", "Verdict",
    "Verifier", "__version__", "load_config", "make", "register_criterion", "register_env", "register_verifier",
]

if TYPE_CHECKING:
    from proofgym.core import Claim, ErrorKind, Outcome, RejectedFact, Verdict
    from proofgym.envs import Environment, StepResult, make, register_env
    from proofgym.judges import register_criterion
    from proofgym.rewards import RewardFunction
    from proofgym.verifiers import Verifier, register_verifier


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'proofgym' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def load_config(path: str | Path) -> Any:
    """Read and validate the config file at ``path`` (YAML, TOML or JSON) as the model of its kind: a run config
    (:class:`proofgym.config.RunConfig`), an eval config (:class:`proofgym.evaluation.EvalConfig`) or an RL config
    (:class:`proofgym.training.rl.RLConfig`). The kind is the file's ``kind`` key, else recognised by its sections
    (:func:`proofgym.config.config_kind`); errors are :class:`proofgym.core.ConfigError`, naming the file and the key.
    """
    from proofgym.config import EVAL_CONFIG, RL_CONFIG, RUN_CONFIG, ConfigError, read_config_file, require_config_kind

    kind = require_config_kind(read_config_file(path), path, RUN_CONFIG, EVAL_CONFIG, RL_CONFIG)
    if kind is RUN_CONFIG:
        from proofgym.config import load_run_config

        return load_run_config(path)
    if kind is EVAL_CONFIG:
        from proofgym.evaluation import load_eval_config

        return load_eval_config(path)
    if kind is RL_CONFIG:
        from proofgym.training.rl import load_rl_config

        return load_rl_config(path)
    raise ConfigError(f"{path}: cannot tell which kind of config this is: declare it with a top-level "
                      "kind: run, eval or rl")
