"""A proofgym tool environment's tools as a verifiers ``vf.Toolset`` (an MCP server).

verifiers starts one server per rollout (``python -m proofgym.integrations.vf._toolset``, with the toolset's
config in ``VF_CONFIG``) and hands it the rollout's task: the server makes a fresh instance of the task's
environment, resets it with the task's seed and serves the environment's own tools, under their own names and JSON
schemas. Each call is one ``env.step``; its result is the observation's text, the tool message ``proofgym eval``
shows the model. The reward does not come from here: the taskset's reward replays the calls through a fresh
instance (:mod:`proofgym.integrations.vf._episode`), so a saved run re-scores offline.

Run by hand (no verifiers rollout around it), the config names the episode:
``python -m proofgym.integrations.vf._toolset --env verilog --seed 0`` (it prints nothing and serves on the port
in ``MCP_PORT``, or any free one written to ``MCP_PORT_FILE``).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from proofgym.envs import Environment, make
from proofgym.integrations.vf._episode import served_arguments


class EnvToolsetConfig(vf.ToolsetConfig):  # type: ignore[misc]
    """The server's config: where it runs (verifiers' fields) and, when run by hand, the episode to serve."""

    env: str | None = None
    """The environment to serve when no rollout hands the server a task."""
    seed: int = 0
    env_config: dict[str, Any] = Field(default_factory=dict)


class EnvToolset(vf.Toolset[EnvToolsetConfig]):  # type: ignore[misc]
    """The tools of one episode of a proofgym environment."""

    TOOL_PREFIX = None  # the environment's own tool names, as proofgym eval offers them

    def __init__(self, config: EnvToolsetConfig | vf.ToolsetConfig | None = None) -> None:
        if not isinstance(config, EnvToolsetConfig):
            config = EnvToolsetConfig.model_validate((config or EnvToolsetConfig()).model_dump())
        super().__init__(config)
        self._env: Environment | None = None
        self._lock = threading.Lock()  # one step at a time: an episode is a sequence

    async def setup(self) -> None:
        # verifiers points TMPDIR at the rollout's runtime folder under ~/.cache/verifiers, which a job handed to
        # another user cannot reach (the Verilog sandbox never runs its jobs as root: they failed as "sandbox
        # unavailable"). The environment's files go to the system's temporary folder instead; it removes them itself.
        os.environ.pop("TMPDIR", None)
        tempfile.tempdir = None
        if self.config.env:
            await asyncio.to_thread(self._start, self.config.env, self.config.seed, self.config.env_config)

    async def setup_task(self, task: Any) -> None:
        await asyncio.to_thread(self._start, task.env, task.seed, task.env_config)

    def _start(self, env_name: str, seed: int, env_config: Mapping[str, Any]) -> None:
        if self._env is not None:
            self._env.close()
        env = make(env_name, **dict(env_config))
        env.reset(seed)
        self._env = env

    def register(self, mcp: Any) -> None:
        if self._env is None:
            raise RuntimeError("no episode to serve: the rollout gave no task and the config names no env")
        for tool in self._env.tools:
            function = tool["function"]
            name = function["name"]
            mcp.add_tool(self._with_state(self._tool(name, function.get("parameters") or {})), name=name,
                         description=function.get("description") or None)
            # The MCP server derives a schema from the signature (every argument untyped); the model is shown the
            # environment's own schema instead, the one proofgym eval sends.
            registered = mcp._tool_manager.get_tool(name)
            if registered is not None and function.get("parameters"):
                registered.parameters = dict(function["parameters"])

    def _tool(self, name: str, schema: Mapping[str, Any]) -> Callable[..., Any]:
        required = set(schema.get("required") or ())
        parameters = [inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, annotation=Any,
                                        default=inspect.Parameter.empty if arg in required else None)
                      for arg in schema.get("properties") or {}]

        async def call(**args: Any) -> str:
            return await asyncio.to_thread(self._step, name, served_arguments(args, schema))

        call.__name__ = name
        call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
        return call

    def _step(self, name: str, args: dict[str, Any]) -> str:
        with self._lock:
            env = self._env
            if env is None:
                return "Error: no episode"
            try:
                result = env.step({"tool": name, "args": args})
            except RuntimeError as exc:  # stepping past the end of the episode
                return f"Error: {exc}"
            return result.observation.text


if __name__ == "__main__":
    EnvToolset.run()
