"""proofgym's environments as verifiers 0.4 (``verifiers.v1``) tasksets.

A task is one seed of one environment: its data is the environment's first observation after ``reset(seed)``, as
``proofgym eval``'s OpenAI policy sends it (the observation's ``system`` text as the system prompt, its text as the
user message). The reward replays the conversation's actions through the environment's own ``step``
(:func:`~proofgym.integrations.vf._episode.score_turns`), and ``trace.info["proofgym"]`` keeps the verdict, its
evidence (a certificate, rejected facts, a simulation log: whatever the verifier gave) and the certificate check.
Tool environments (those that take no plain-text answer) get their tools from :class:`EnvToolset`, an MCP server
over a fresh instance of the environment per rollout.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import types
from typing import Any

import verifiers.v1 as vf
from pydantic import Field, field_validator, model_validator

from proofgym.core import ConfigError
from proofgym.envs import env_hook, env_names, make
from proofgym.evaluation import parse_seeds
from proofgym.integrations.vf._episode import ModelTurn, score_turns


class ProofgymTaskData(vf.TaskData):  # type: ignore[misc]
    """One seed of one proofgym environment (``trace.task.data`` in ``traces.jsonl``)."""

    env: str
    """The proofgym environment id."""
    seed: int
    """The seed ``reset`` was given."""
    env_config: dict[str, Any] = Field(default_factory=dict)
    """The environment's config (``proofgym.make(env, **env_config)``)."""


class ProofgymTaskConfig(vf.TaskConfig):  # type: ignore[misc]
    """Knobs under ``--env.taskset.task.*``."""

    tools: bool | None = None
    """Serve the environment's tools (an MCP server per rollout, the tools under their own names and schemas).
    Unset: for the environments that take no plain-text answer (Verilog, Crafter, fact finding), and the others
    answer in plain text. ``true`` also offers a single-answer environment's ``answer`` tool, as ``proofgym eval``
    does: the model then gets the very request ``proofgym eval`` sends it."""
    toolset: vf.ToolsetConfig = vf.ToolsetConfig()
    """Where the tool server runs (verifiers' toolset config)."""


class ProofgymTask(vf.Task[ProofgymTaskData, vf.State, ProofgymTaskConfig]):  # type: ignore[misc]
    """A task scored by the proofgym environment itself."""

    @property
    def key(self) -> str:
        """Durable: the environment, the seed and, when one is set, a digest of the environment's config."""
        data = self.data
        key = f"{data.env}:{data.seed}"
        if data.env_config:
            digest = hashlib.sha256(json.dumps(data.env_config, sort_keys=True).encode()).hexdigest()[:12]
            key = f"{key}:{digest}"
        return key

    @classmethod
    def toolsets(cls, config: ProofgymTaskConfig) -> list[vf.Toolset]:
        # Imported here: verifiers runs the tool server as ``python -m`` of its module, which must not have been
        # imported by this package already.
        from proofgym.integrations.vf._toolset import EnvToolset

        return [EnvToolset(config.toolset)] if config.tools else []

    @vf.reward(weight=1.0)  # type: ignore[untyped-decorator]
    async def proofgym(self, trace: vf.Trace) -> float:
        """The episode's return from the environment's own ``step`` over the conversation's actions; the verdict,
        its evidence and the certificate check go to ``trace.info["proofgym"]``."""
        return float((await self._episode(trace))["reward"])

    @vf.metric  # type: ignore[untyped-decorator]
    async def passed(self, trace: vf.Trace) -> float:
        """1.0 when the episode reached the environment's top outcome (certified and correct), else 0.0."""
        return 1.0 if (await self._episode(trace))["outcome_score"] == 1.0 else 0.0

    async def _episode(self, trace: vf.Trace) -> dict[str, Any]:
        """The conversation scored once per trace (metrics run before rewards; both read it), into
        ``trace.info["proofgym"]``."""
        cache: dict[str, asyncio.Task[dict[str, Any]]] = self.__dict__.setdefault("_episodes", {})
        if trace.id not in cache:
            cache[trace.id] = asyncio.ensure_future(self._score(trace))
        info = await cache[trace.id]
        trace.info["proofgym"] = info
        return info

    async def _score(self, trace: vf.Trace) -> dict[str, Any]:
        data = self.data
        turns = [ModelTurn(message.content, tuple((call.id, call.name, call.arguments)
                                                  for call in message.tool_calls or ()))
                 for message in trace.assistant_messages]
        score = await asyncio.to_thread(score_turns, data.env, data.seed, turns, data.env_config)
        info: dict[str, Any] = score.info(data.env, data.seed)
        return info


def check_env(env: str) -> None:
    """Raise ``ValueError`` (one line, naming the environments there are) unless ``env`` is a registered one."""
    names = env_names()
    if env not in names:
        given = f"{env!r} is no proofgym environment" if env else "no proofgym environment given"
        raise ValueError(f"env: {given}: expected one of {', '.join(names)} (--env.taskset.env NAME)")


class ProofgymTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    """Knobs under ``--env.taskset.*``."""

    env: str = ""
    """The proofgym environment id (``proofgym.envs.env_names()``: built-in ones and plugins')."""
    num_tasks: int = Field(default=10, ge=1)
    """How many tasks: seeds 0 .. num_tasks - 1 (unless ``seeds`` is given)."""
    seeds: str | list[int] | None = None
    """The seeds, as ``proofgym eval`` takes them: a list, or ranges such as "0-31" or "0-7,10"."""
    env_config: dict[str, Any] = Field(default_factory=dict)
    """Passed to the environment: ``proofgym.make(env, **env_config)`` (for example {"split": "test"})."""
    task: ProofgymTaskConfig = ProofgymTaskConfig()

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> Any:
        return None if value is None else parse_seeds(value)

    @model_validator(mode="after")
    def _known_env(self) -> ProofgymTasksetConfig:
        # An empty env is refused when the taskset is built: vf-eval first validates the config without the flags.
        if self.env:
            check_env(self.env)
        return self

    def seed_list(self) -> list[int]:
        return list(self.seeds) if isinstance(self.seeds, list) else list(range(self.num_tasks))


class ProofgymTaskset(vf.Taskset[ProofgymTask, ProofgymTasksetConfig]):  # type: ignore[misc]
    """Any proofgym environment, named by the ``env`` config field (``vf-eval proofgym-env --env.taskset.env
    loan``); :func:`taskset_for` makes one fixed to an environment."""

    def __init__(self, config: ProofgymTasksetConfig) -> None:
        check_env(config.env)
        super().__init__(config)
        if config.task.tools is None:
            try:
                with make(config.env, **config.env_config) as env:
                    tools = not env_hook(env, "accepts_text")
            except ConfigError as exc:
                raise ValueError(f"env_config: {exc}") from None
            self.config.task = config.task.model_copy(update={"tools": tools})

    def load(self) -> list[ProofgymTask]:
        config = self.config
        tasks = []
        with make(config.env, **config.env_config) as env:
            for seed in config.seed_list():
                observation = env.reset(seed)
                system = observation.data.get("system")
                data = ProofgymTaskData(id=f"{config.env}-{seed}", name=f"{config.env} seed {seed}",
                                        prompt=observation.text,
                                        system_prompt=system if isinstance(system, str) and system else None,
                                        env=config.env, seed=seed, env_config=config.env_config)
                tasks.append(ProofgymTask(data, config.task))
        return tasks


def taskset_for(env: str, *, module: str | None = None) -> type[ProofgymTaskset]:
    """A :class:`ProofgymTaskset` fixed to environment ``env`` (its config's ``env`` defaults to it and takes no
    other): what a per-environment module exports (``proofgym_loan.LoanTaskset``, ``module`` its module)."""
    name = "".join(part.title() for part in env.split("_")) + "Taskset"

    def _only_this_env(self: ProofgymTasksetConfig) -> ProofgymTasksetConfig:
        if self.env != env:
            raise ValueError(f"env: this taskset is {env!r}; for {self.env!r} use proofgym-env "
                             f"--env.taskset.env {self.env}")
        return self

    config_cls = types.new_class(f"{name}Config", (ProofgymTasksetConfig,), {},
                                 lambda ns: ns.update({"__annotations__": {"env": "str"}, "env": env,
                                                       "_only_this_env": model_validator(mode="after")(
                                                           _only_this_env)}))
    cls = types.new_class(name, (ProofgymTaskset, vf.Taskset[ProofgymTask, config_cls]), {},
                          lambda ns: ns.update({"__doc__": f"proofgym's {env!r} environment as a verifiers taskset."}))
    if module is not None:
        cls.__module__ = config_cls.__module__ = module
    return cls
