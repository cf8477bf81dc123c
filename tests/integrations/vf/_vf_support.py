"""Shared by the verifiers taskset tests: a verifiers trace holding a recorded conversation, scored by the taskset's
own reward, and the conversation ``proofgym eval`` recorded for a seed (read back from its trace store)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

vf = pytest.importorskip("verifiers.v1")

from verifiers.v1.configs.agent import AgentConfig  # noqa: E402
from verifiers.v1.graph import MessageNode  # noqa: E402
from verifiers.v1.trace import AgentInfo, TraceTask  # noqa: E402

from proofgym.evaluation import EvalReport, load_eval_config, run_eval  # noqa: E402
from proofgym.integrations.vf import ProofgymTask, ProofgymTaskConfig, ProofgymTaskData  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402


def assistant_message(action: Any) -> Any:
    """What a model turn that took ``action`` looks like in a verifiers trace: a native tool call for a
    ``{"tool", "args"}`` or OpenAI-format call, the text itself otherwise."""
    if isinstance(action, Mapping) and "function" in action:
        function = action["function"]
        return vf.AssistantMessage(content=None, tool_calls=[vf.ToolCall(
            id=str(action.get("id") or "call"), name=function["name"], arguments=function["arguments"])])
    if isinstance(action, Mapping) and "tool" in action:
        return vf.AssistantMessage(content=None, tool_calls=[vf.ToolCall(
            id="call", name=action["tool"], arguments=json.dumps(action.get("args") or {}))])
    return vf.AssistantMessage(content=action)


def scored_trace(env: str, seed: int, turns: Sequence[Any], env_config: Mapping[str, Any] | None = None) -> Any:
    """A verifiers trace of ``turns`` (assistant messages) on ``env``'s seed, scored by :class:`ProofgymTask`."""
    data = ProofgymTaskData(id=f"{env}-{seed}", prompt="(recorded)", env=env, seed=seed,
                            env_config=dict(env_config or {}))
    nodes = [MessageNode(message=vf.UserMessage(content="(recorded)"))]
    for turn in turns:
        nodes.append(MessageNode(message=turn, parent=len(nodes) - 1, sampled=True))
    trace = vf.Trace(task=TraceTask(type="ProofgymTask", data=data), agent=AgentInfo(config=AgentConfig()),
                     nodes=nodes)
    asyncio.run(ProofgymTask(data, ProofgymTaskConfig()).score(trace))
    return trace


def write_eval(path: Path, evaluation: Mapping[str, Any], policy_config: Mapping[str, Any] | None = None,
               env_config: Mapping[str, Any] | None = None) -> Path:
    lines = ['kind = "eval"', "[evaluation]", *(f"{key} = {json.dumps(value)}" for key, value in evaluation.items())]
    for table, values in (("policy_config", policy_config), ("env_config", env_config)):
        if values:
            lines += [f"[evaluation.{table}]", *(f"{key} = {json.dumps(value)}" for key, value in values.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def proofgym_eval(path: Path) -> tuple[EvalReport, dict[int, list[Any]]]:
    """``proofgym eval --config path`` (its function) and, per seed, the actions its rollout took, read back from
    the trace store it wrote."""
    config = load_eval_config(path)
    report = run_eval(config)
    store = TraceStore(config.evaluation.traces)
    try:
        actions = {result.seed: [step.action for step in store.get_session(result.session_id).steps]
                   for result in report.results}
    finally:
        store.close()
    return report, actions
