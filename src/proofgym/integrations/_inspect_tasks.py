"""proofgym's environments as inspect_ai tasks: ``inspect eval proofgym/<env>`` (one task per registered environment,
plugins' included) and ``inspect eval proofgym/env -T env=<name>``.

- the dataset: one sample per seed (``-T seeds=0-7``, ``"0-7,10"`` or a number), its input the observation of
  ``reset(seed)`` as ``proofgym eval``'s ``openai`` policy sends it (the observation's system text, then its text);
- the solver (:func:`proofgym_episode`): proofgym's own rollout loop (:func:`proofgym.rollouts.run_rollout`) with
  inspect's model as the policy: the environment's tools offered natively, every tool call stepped in the
  environment, its result sent back, until the episode ends (``-T max_turns``: the loop's turn limit; default the
  environment's own) -- single-answer and tool environments alike;
- the scorer (:func:`~proofgym.integrations._inspect_scorer.proofgym_scorer`): the environment's reward, verdict and
  evidence;
- ``-T env_config=...``: the environment's config (a mapping, as YAML or JSON text: ``-T env_config='{chat: true}'``;
  ``split`` / ``index`` select a split's seeds, as for ``proofgym eval``);
- ``-T max_time_s=...``: each episode's wall-clock budget;
- ``-T solver=tools``: inspect's own tool loop instead (:mod:`~proofgym.integrations._inspect_tools`): each of the
  environment's tools an inspect tool that steps it, every call a ``ToolEvent`` in the transcript.

The generation defaults are ``proofgym eval``'s (temperature 0, at most 1024 tokens); ``--temperature`` and
``--max-tokens`` override them. A parameter a task does not have, an unknown environment, a bad seed range or an
environment config the environment refuses stops the eval in one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from proofgym.core import ConfigError
from proofgym.envs import env_names, make
from proofgym.evaluation import parse_seeds
from proofgym.integrations._inspect_messages import inspect_messages
from proofgym.integrations._inspect_policy import InspectModelPolicy
from proofgym.integrations._inspect_scorer import EPISODE_KEY, action_text, episode_summary, proofgym_scorer
from proofgym.integrations._inspect_tools import proofgym_tool_loop
from proofgym.rollouts import RolloutResult, run_rollout

#: The generation defaults of ``proofgym eval``'s ``openai`` policy.
DEFAULT_CONFIG = GenerateConfig(temperature=0.0, max_tokens=1024)
_PARAMETERS = ("seeds", "env_config", "max_turns", "max_time_s", "solver")
#: The solvers ``-T solver`` picks: proofgym's rollout loop, or inspect's tool loop over the environment's tools.
SOLVERS = ("episode", "tools")


class EpisodeError(RuntimeError):
    """An episode that could not be played (its model unavailable, its environment failing)."""


def _refuse(task_name: str, problem: str) -> PrerequisiteError:
    return PrerequisiteError(f"{task_name}: {problem}")


def _env_config(task_name: str, value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise _refuse(task_name, f"-T env_config is not YAML or JSON: {exc}".splitlines()[0]) from None
    if not isinstance(value, Mapping):
        raise _refuse(task_name, f"-T env_config must be a mapping such as '{{chat: true}}', got {value!r}")
    return dict(value)


def _positive(task_name: str, name: str, value: Any, kind: type) -> Any:
    if value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(value, bool) or number <= 0:
        raise _refuse(task_name, f"-T {name} must be a number > 0, got {value!r}")
    return number


def _samples(task_name: str, env: str, seeds: list[int], env_config: dict[str, Any]) -> list[Sample]:
    try:
        instance = make(env, **env_config)
    except (ConfigError, ValueError, TypeError) as exc:
        raise _refuse(task_name, f"-T env_config: {exc}".splitlines()[0]) from None
    samples = []
    with instance:
        for seed in seeds:
            observation = instance.reset(seed)
            messages: list[dict[str, Any]] = []
            system = observation.data.get("system")
            if isinstance(system, str) and system:
                messages.append({"role": "system", "content": system})
            messages.append({"role": "user", "content": observation.text})
            chat: list[ChatMessage] = inspect_messages(messages)
            samples.append(Sample(input=chat, id=seed, metadata={"env": env, "seed": seed}))
    return samples


@solver
def proofgym_episode(env: str, env_config: dict[str, Any] | None = None, max_turns: int | None = None,
                     max_time_s: float | None = None) -> Solver:
    """Play the sample's episode with proofgym's rollout loop, inspect's model acting (see the module's
    documentation); the episode is left in the state's store for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        policy = InspectModelPolicy(get_model())
        result: RolloutResult = await run_rollout(env, seed=seed, policy=policy, env_config=env_config or {},
                                                  max_turns=max_turns, max_time_s=max_time_s, run_id="inspect")
        session = result.session
        state.messages = inspect_messages(result.messages)
        if policy.outputs:
            state.output = policy.outputs[-1]
        if session.status == "error":
            raise EpisodeError(f"{env} seed {seed}: the episode could not be played: {session.error}")
        last = session.steps[-1] if session.steps else None
        components: dict[str, float] = {}
        for step in session.steps:
            for key, value in (step.info.get("reward_components") or {}).items():
                if isinstance(value, (int, float)):
                    components[key] = components.get(key, 0.0) + float(value)
        score = session.outcome_reward.score if session.outcome_reward is not None else None
        state.store.set(EPISODE_KEY, episode_summary(
            dict(last.info) if last is not None else {}, total=session.total_reward, score=score,
            steps=len(session.steps), status=session.status, error=session.error, components=components,
            truncated=bool(last is not None and last.truncated),
            answer=action_text(last.action) if last is not None else ""))
        state.completed = True
        return state

    return solve


def proofgym_task(env: str, *, seeds: Any = "0-7", env_config: Any = None, max_turns: Any = None,
                  max_time_s: Any = None, solver: str = "episode", task_name: str | None = None,
                  unknown: Mapping[str, Any] | None = None) -> Task:
    """The inspect task of environment ``env`` (see the module's documentation). ``task_name`` names it in refusals
    (default ``proofgym/<env>``); ``unknown``: parameters the task was given and does not have (refused)."""
    task_name = task_name or f"proofgym/{env}"
    if unknown:
        raise _refuse(task_name, f"unknown task parameter(s) {', '.join(sorted(unknown))} (-T); expected "
                                 f"{', '.join(('env', *_PARAMETERS) if task_name.endswith('/env') else _PARAMETERS)}")
    if env not in env_names():
        raise _refuse(task_name, f"unknown environment {env!r}; expected one of {', '.join(env_names())}")
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        raise _refuse(task_name, f"-T seeds: {exc}") from None
    config = _env_config(task_name, env_config)
    turns = _positive(task_name, "max_turns", max_turns, int)
    budget = _positive(task_name, "max_time_s", max_time_s, float)
    if solver not in SOLVERS:
        raise _refuse(task_name, f"-T solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    if solver == "tools" and budget is not None:
        raise _refuse(task_name, "-T max_time_s is the episode solver's; with -T solver=tools use inspect's "
                                 "--time-limit")
    dataset = MemoryDataset(_samples(task_name, env, seed_list, config), name=f"proofgym-{env}")
    play = proofgym_episode(env, config, turns, budget) if solver == "episode" else \
        proofgym_tool_loop(env, config, turns)
    return Task(dataset=dataset, solver=play,
                scorer=proofgym_scorer(env, config), config=DEFAULT_CONFIG,
                metadata={"proofgym_env": env, "env_config": json.loads(json.dumps(config, default=str))})


@task
def env(env: str = "", seeds: Any = "0-7", env_config: Any = None, max_turns: Any = None, max_time_s: Any = None,
        solver: str = "episode", **unknown: Any) -> Task:
    """Any registered proofgym environment, plugins' included: ``inspect eval proofgym/env -T env=loan``."""
    if not env:
        raise _refuse("proofgym/env", f"name the environment: -T env=<name>, one of {', '.join(env_names())}")
    return proofgym_task(env, task_name="proofgym/env", seeds=seeds, env_config=env_config, max_turns=max_turns,
                         max_time_s=max_time_s, solver=solver, unknown=unknown)


def _env_task(name: str) -> Callable[..., Task]:
    def env_task(seeds: Any = "0-7", env_config: Any = None, max_turns: Any = None, max_time_s: Any = None,
                 solver: str = "episode", **unknown: Any) -> Task:
        return proofgym_task(name, task_name=f"proofgym/{name}", seeds=seeds, env_config=env_config,
                             max_turns=max_turns, max_time_s=max_time_s, solver=solver, unknown=unknown)

    env_task.__name__ = env_task.__qualname__ = name
    env_task.__doc__ = f"proofgym's {name!r} environment: inspect eval proofgym/{name} -T seeds=0-7"
    registered: Callable[..., Task] = task(name=name)(env_task)
    return registered


#: One task per environment registered when this module is imported (``proofgym/<name>``).
ENV_TASKS: dict[str, Callable[..., Task]] = {name: _env_task(name) for name in env_names() if name != "env"}
