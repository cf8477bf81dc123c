"""The inspect_ai scorer of a proofgym episode: the environment's own reward, its verdict and the evidence for it.

The reward is never computed here. Under proofgym's episode solver the environment's ``step`` (its verifier and
reward function) ran during the episode and this scorer reads what it returned; under any other solver (inspect's
``generate()``) the scorer resets a fresh instance of the environment with the sample's seed and steps it with the
model's last reply, read as ``proofgym eval``'s ``openai`` policy reads a reply.

- ``Score.value``: the episode's return (the sum of its step rewards: ``proofgym eval``'s "return");
- ``Score.answer``: the last action's text (the answer, the submitted design, the tool call);
- ``Score.explanation``: the evidence as readable text: the outcome and reward components, the verifier's reason, the
  proof summary and the rules that fired (rulebook domains), the facts it refused, the simulation log (Verilog);
- ``Score.metadata``: ``outcome``, ``outcome_score`` (1 / 0 / none when not judged), ``passed``, ``correct``,
  ``components``, ``rejected_facts``, ``verdict`` (the whole verdict dict), ``steps``, ``truncated``, ``status``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from proofgym.envs import Observation, StepResult, env_hook, make
from proofgym.integrations._inspect_messages import chat_completion
from proofgym.policies import PolicyReply, PolicyRequest, read_chat_reply

#: Where the episode solver leaves the episode for the scorer (``TaskState.store``).
EPISODE_KEY = "proofgym:episode"
_SKIP_EVIDENCE = {"proof_summary", "symbolic_trace", "rejected_facts", "confidence"}
_LABELS = {"proof": "certificate (the proof the checker verified)", "sim_log": "simulation log"}


def episode_summary(info: Mapping[str, Any], *, total: float, score: float | None, steps: int, status: str = "ok",
                    error: str | None = None, answer: str = "", components: Mapping[str, float] | None = None,
                    truncated: bool = False) -> dict[str, Any]:
    """What the scorer reports of an episode: its last step's ``info`` (which mirrors the typed fields of a
    :class:`~proofgym.envs.StepResult`) and the episode's return, outcome score, steps and status. JSON-native."""
    verdict = info.get("verdict") if isinstance(info.get("verdict"), Mapping) else None
    rejected = list((verdict or {}).get("rejected_facts") or [])
    summary: dict[str, Any] = {
        "return": total, "outcome_score": score, "outcome": info.get("outcome"), "passed": info.get("passed"),
        "correct": info.get("correct"), "abstained": info.get("abstained"),
        "components": dict(components if components is not None else info.get("reward_components") or {}),
        "rejected_facts": rejected, "reason": info.get("reason") or (verdict or {}).get("reason"),
        "verdict": dict(verdict) if verdict is not None else None, "steps": steps, "truncated": truncated,
        "status": status,
        "error": error, "answer": answer,
    }
    plain: dict[str, Any] = json.loads(json.dumps(summary, default=str))
    return plain


def _signed(value: Any) -> str:
    return f"{value:+.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _block(name: str, value: Any) -> list[str]:
    if isinstance(value, str) and "\n" in value:
        return [f"{name}:", *("  " + line for line in value.splitlines())]
    if isinstance(value, (dict, list)):
        return [f"{name}: {json.dumps(value, default=str)}"]
    return [f"{name}: {value}"]


def explanation(summary: Mapping[str, Any]) -> str:
    """The evidence of an episode as readable text (see the module's documentation)."""
    cut = " (cut off at the turn limit or time budget)" if summary.get("truncated") else ""
    lines = [f"outcome: {summary.get('outcome') or 'none'}{cut}; return {_signed(summary.get('return'))} over "
             f"{summary.get('steps')} step(s); status {summary.get('status')}"]
    components = summary.get("components") or {}
    if components:
        lines.append("reward components: " + ", ".join(f"{key} {_signed(value)}" for key, value in components.items()))
    if summary.get("error"):
        lines.append(f"error: {summary['error']}")
    verdict: Mapping[str, Any] = summary.get("verdict") or {}
    if summary.get("reason"):
        lines.append(f"reason: {summary['reason']}")
    found = verdict.get("evidence")
    evidence: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    if verdict.get("reason") and verdict.get("reason") not in (summary.get("reason"), evidence.get("proof_summary")):
        lines.append(f"verifier's reason: {verdict['reason']}")
    if evidence.get("proof_summary"):
        lines.append(f"proof summary: {evidence['proof_summary']}")
    found = evidence.get("symbolic_trace")
    trace: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    fired = [rule for rule in trace.get("rules") or [] if isinstance(rule, Mapping) and rule.get("fired")]
    if fired:
        lines.append(f"rules fired ({len(fired)} of {trace.get('rules_evaluated', len(trace.get('rules') or []))}):")
        lines.extend(f"  - {rule.get('rule_id')}: {rule.get('explanation') or ''}".rstrip(": ") for rule in fired)
    rejected = summary.get("rejected_facts") or []
    if rejected:
        lines.append(f"facts refused ({len(rejected)}):")
        lines.extend(f"  - {json.dumps(fact, default=str)}" for fact in rejected)
    for key, value in evidence.items():
        if key not in _SKIP_EVIDENCE and value not in (None, "", [], {}):
            lines.extend(_block(_LABELS.get(key, key), value))
    if verdict.get("verifier"):
        lines.append(f"verifier: {verdict['verifier']}")
    if summary.get("answer"):
        lines.extend(_block("last action", summary["answer"]))
    return "\n".join(lines)


def action_text(action: Any) -> str:
    """An action as the text a reader wants: the answer a tool call carries, else the call as JSON."""
    if isinstance(action, str):
        return action
    if isinstance(action, Mapping):
        function = action.get("function")
        name = action.get("tool") or (function.get("name") if isinstance(function, Mapping) else None)
        args = action.get("args") if "args" in action else \
            (function.get("arguments") if isinstance(function, Mapping) else None)
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return f"{name}({args})"
        only = next(iter(args.values())) if isinstance(args, Mapping) and len(args) == 1 else None
        if isinstance(only, str) and (name == "answer" or "\n" in only):
            return only  # the answer (or the file) the call carries
        return f"{name}({json.dumps(args, default=str)})"
    return "" if action is None else json.dumps(action, default=str)


def _step_reply(env_name: str, env_config: Mapping[str, Any], seed: int, state: TaskState) -> dict[str, Any]:
    """Score a sample no episode solver played: a fresh environment, reset with the seed and stepped with the
    model's last reply (blocking: run on a worker thread)."""
    with make(env_name, **dict(env_config)) as env:
        observation: Observation = env.reset(seed)
        request = PolicyRequest(messages=[{"role": "user", "content": observation.text}],
                                tools=[dict(tool) for tool in env.tools], seed=seed,
                                accepts_text=bool(env_hook(env, "accepts_text")))
        reply: PolicyReply = read_chat_reply(chat_completion(state.output), request)
        result: StepResult = env.step(reply.action if reply.error is None else None)
    return episode_summary(result.info, total=float(result.reward), score=result.outcome_score, steps=1,
                           answer=action_text(reply.action), error=reply.error)


@metric
def outcome() -> Metric:
    """The mean outcome score over the judged samples (1 solved, 0 not; a sample whose answer could not be
    verified is left out): ``proofgym eval``'s "outcome" column."""

    def compute(scores: list[SampleScore]) -> Value:
        judged = [value for value in ((s.score.metadata or {}).get("outcome_score") for s in scores)
                  if isinstance(value, (int, float))]
        return sum(judged) / len(judged) if judged else 0.0

    return compute


@scorer(metrics=[mean(), stderr(), outcome()])
def proofgym_scorer(env: str, env_config: dict[str, Any] | None = None) -> Scorer:
    """The environment's reward for the sample (see the module's documentation)."""

    async def score(state: TaskState, target: Target) -> Score:
        summary = state.store.get(EPISODE_KEY)
        if not isinstance(summary, Mapping):
            seed = int(state.metadata["seed"])
            summary = await anyio.to_thread.run_sync(_step_reply, env, env_config or {}, seed, state)
        return Score(value=float(summary["return"]), answer=str(summary.get("answer") or ""),
                     explanation=explanation(summary), metadata=dict(summary))

    return score
