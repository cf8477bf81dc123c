"""Multi-step tool environments: the protocol, a base class for tool-calling environments, and a registry."""

from proofgym.envs._core import Environment, Observation, StepResult
from proofgym.envs._registry import env_names, make, register_env
from proofgym.envs._tool_env import ToolEnv, ToolResult
from proofgym.envs._tools import Tool, ToolCall

register_env("verilog", "proofgym.verilog._env:make_verilog_env")

__all__ = [
    "Environment",
    "Observation",
    "StepResult",
    "Tool",
    "ToolCall",
    "ToolEnv",
    "ToolResult",
    "env_names",
    "make",
    "register_env",
]
