"""A verifiers rollout's conversation scored by proofgym: its actions replayed through the environment's own ``step``.

What the model said is turned into actions exactly as ``proofgym eval``'s OpenAI policy turns a reply into one (a
native tool call is the call; text goes through :func:`proofgym.policies.read_text_action`: one JSON call in the
text, or the text itself as the answer when the environment takes text), and each action is stepped through a fresh
instance of the environment reset with the task's seed. The reward is the episode's return (the sum of the step
rewards, what ``proofgym eval`` reports per seed as ``total_return``), so a completion scores here what it scores
there; nothing about the reward is computed here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from proofgym.core import bounded_json
from proofgym.envs import StepResult, env_hook, make
from proofgym.policies import read_text_action

#: How much of each replayed step's observation a trace keeps (the verdict's evidence is kept whole).
_OBSERVATION_CHARS = 2000


@dataclass(frozen=True)
class ModelTurn:
    """One assistant message of the conversation: its text and its native tool calls (``(id, name, arguments)``,
    the arguments as the model emitted them)."""

    content: str | None
    tool_calls: Sequence[tuple[str, str, str]] = ()


@dataclass
class EpisodeScore:
    """What the environment made of the replayed actions: the return, the last step's typed fields and the
    evidence its verdict carries."""

    reward: float = 0.0
    steps: list[dict[str, Any]] = field(default_factory=list)
    last: StepResult | None = None

    @property
    def done(self) -> bool:
        return self.last is not None and self.last.done

    def info(self, env_name: str, seed: int) -> dict[str, Any]:
        """The JSON-native record a trace keeps: the verdict with its evidence, whether its certificate was checked,
        the outcome and reward components, and each replayed step."""
        last = self.last
        verdict = None if last is None or last.verdict is None else dict(last.verdict)
        evidence = verdict.get("evidence") if verdict else None
        checked = evidence.get("proof_checked") if isinstance(evidence, Mapping) else None
        record: dict[str, Any] = bounded_json({
            "env": env_name,
            "seed": seed,
            "reward": self.reward,
            "done": self.done,
            "truncated": bool(last and last.truncated),
            "outcome": None if last is None else last.outcome,
            "passed": None if last is None else last.passed,
            "correct": None if last is None else last.correct,
            "outcome_score": None if last is None else last.outcome_score,
            "certificate_checked": checked if isinstance(checked, bool) else None,
            "verdict": verdict,
            "components": None if last is None or last.components is None else dict(last.components),
            "steps": self.steps,
        })
        return record


def served_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a tool call reaches the environment with through the MCP tool server: only the names the
    tool's schema declares (the server drops others), an optional one left out when it is null (the server fills
    an absent one with null). The replay steps the same, so a rollout is scored on the results the model was shown."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return {key: value for key, value in arguments.items()
            if key in properties and (value is not None or key in required)}


def _as_served(arguments: str, schema: Mapping[str, Any] | None) -> str:
    if schema is None:
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return arguments  # the server refused it too: the environment charges the turn
    return json.dumps(served_arguments(parsed, schema)) if isinstance(parsed, Mapping) else arguments


def actions(turns: Sequence[ModelTurn], *, accepts_text: bool,
            schemas: Mapping[str, Mapping[str, Any]] | None = None) -> Iterator[Any]:
    """The actions the turns hold, in order, as ``proofgym eval``'s OpenAI policy reads a reply: each native tool
    call (a tool server ran each one), else the reply's text read by :func:`proofgym.policies.read_text_action`
    (one JSON call in it, or the text itself as the answer when the environment takes text), or ``None`` when it
    holds no usable action: the environment then charges the turn, as it does there. With ``schemas`` (each tool's
    JSON schema by name), a native call's arguments are those the tool server passed on (:func:`served_arguments`)."""
    for turn in turns:
        if turn.tool_calls:
            for call_id, name, arguments in turn.tool_calls:
                served = _as_served(arguments, (schemas or {}).get(name))
                yield {"type": "function", "id": call_id, "function": {"name": name, "arguments": served}}
            continue
        parsed = read_text_action(turn.content or "", accepts_text=accepts_text)
        yield parsed.action if parsed.error is None else None


def score_turns(env_name: str, seed: int, turns: Sequence[ModelTurn],
                env_config: Mapping[str, Any] | None = None) -> EpisodeScore:
    """Replay ``turns`` through a fresh ``env_name`` reset with ``seed``: the return and the last step."""
    score = EpisodeScore()
    with make(env_name, **dict(env_config or {})) as env:
        env.reset(seed)
        schemas = {tool["function"]["name"]: tool["function"].get("parameters") or {} for tool in env.tools}
        for action in actions(turns, accepts_text=bool(env_hook(env, "accepts_text")), schemas=schemas):
            result = env.step(action)
            score.reward += result.reward
            score.last = result
            score.steps.append({"action": _shown(action), "reward": result.reward, "done": result.done,
                                "outcome": result.outcome,
                                "observation": result.observation.text[:_OBSERVATION_CHARS]})
            if result.done:
                break
    return score


def _shown(action: Any) -> Any:
    if isinstance(action, Mapping) and isinstance(action.get("function"), Mapping):
        function = action["function"]
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (ValueError, RecursionError):
            arguments = function.get("arguments")
        return {"tool": function.get("name"), "args": arguments}
    return action
