"""Credit: the turns of a trace as the policy sampled them, and the values their advantages are computed from
(trajectory or decision level; the advantages themselves: :func:`proofgym.training.group_advantages`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from proofgym.judges import TrajectoryScore
from proofgym.traces import SessionTrace


@dataclass(frozen=True)
class Turn:
    """One completion of the policy: the prompt ids the server fed the model, the ids it sampled, their
    log-probabilities under the sampling weights, and the step of the trace it decided."""

    step_index: int
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    old_logprobs: tuple[float, ...] | None
    advantage: float = 0.0


def sampled_turns(trace: SessionTrace) -> list[Turn] | str:
    """Every model call of ``trace`` with its recorded ids (never re-tokenised), or why they cannot be read.

    A call that got no completion (a timeout, a refused request) is skipped when a later call of the same step got
    one: it was an attempt the policy retried, and the environment saw only the retry's answer."""
    turns = []
    for step in trace.steps:
        calls = step.lm_calls
        for position, call in enumerate(calls):
            choice = _first_choice(call.response)
            if choice is None:
                if any(_first_choice(later.response) is not None for later in calls[position + 1:]):
                    continue
                return f"step {step.index}: the model call has no recorded completion ({call.error or 'no response'})"
            # serve-model puts the prompt's ids in the choice, vLLM (return_token_ids) at the response's top level
            prompt: Any = choice.get("prompt_token_ids") or call.response.get("prompt_token_ids")
            completion: Any = choice.get("token_ids")
            if not _ids(prompt) or not _ids(completion):
                return f"step {step.index}: the server returned no prompt_token_ids / token_ids"
            logprobs = None
            content = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), Mapping) \
                else None
            if isinstance(content, list) and len(content) == len(completion):
                values: list[Any] = [entry.get("logprob") for entry in content if isinstance(entry, Mapping)]
                if len(values) == len(completion) and all(isinstance(v, (int, float)) and math.isfinite(v)
                                                          for v in values):
                    logprobs = tuple(float(v) for v in values)
            turns.append(Turn(step.index, tuple(prompt), tuple(completion), logprobs))
    return turns or "the trace has no model call"


def _first_choice(response: Any) -> Mapping[str, Any] | None:
    if not isinstance(response, Mapping):
        return None
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    return choices[0]


def _ids(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                           for v in value)


def decision_values(score: TrajectoryScore, trace: SessionTrace, *, indicator_lambda: float) -> list[float]:
    """``decision_stepwise``: each decision's blended event reward (times ``indicator_lambda``) and its step's
    environment reward, plus an equal share of the rest of the blend (the outcome)."""
    reward = score.reward
    weights = reward.weights
    events = {e.step_index: e for e in score.events if e.valid}
    own = []
    for step in trace.steps:
        event = events.get(step.index)
        part = weights.env * step.reward
        if event is not None and reward.event_total is not None:
            part += indicator_lambda * weights.event * float(event.total)  # type: ignore[arg-type]
        own.append(part)
    rest = reward.value - sum(own) if indicator_lambda == 1.0 else \
        reward.value - sum(weights.env * s.reward for s in trace.steps) - weights.event * (reward.event_total or 0.0)
    share = rest / max(len(own), 1)
    return [value + share for value in own]

