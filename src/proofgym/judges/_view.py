"""What a judge reads of a trajectory: its steps rendered as bounded plain text.

Outcome judges read the whole trajectory; event judges read one decision with a bounded window of the steps before
it. Every part is cut to a bound (the middle is elided, saying how much), so a very long candidate costs a judge a
known number of characters. The text is untrusted: the judge prompt delimits and escapes it.
"""

from __future__ import annotations

import json
from typing import Any

from proofgym.traces import SessionTrace, StepTrace

#: Characters kept of one observation / action / tool result, and of a whole rendering.
PART_CHARS = 4000
TOTAL_CHARS = 24000


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its start and end and saying how much was elided."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2) // 2
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters elided ...]\n{text[-keep:]}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def render_step(step: StepTrace, *, part_chars: int = PART_CHARS) -> str:
    """One step: what the agent saw, what it did, and what the environment answered."""
    lines = [f"## Step {step.index}"]
    observation = _text(step.observation)
    if observation:
        lines.append("Observation:\n" + clip(observation, part_chars))
    event = step.env_event
    if event is not None and event.tool:
        lines.append(f"Action: {event.tool}(" + clip(_text(event.args), part_chars) + ")")
    else:
        lines.append("Action:\n" + clip(_text(step.action), part_chars))
    if event is not None and event.result is not None:
        lines.append("Result:\n" + clip(_text(event.result), part_chars))
    lines.append(f"Reward: {step.reward:g}" + (" (episode ended)" if step.done or step.truncated else ""))
    return "\n".join(lines)


def render_trajectory(trace: SessionTrace, *, total_chars: int = TOTAL_CHARS, part_chars: int = PART_CHARS) -> str:
    """The whole trajectory (for outcome judges)."""
    body = "\n\n".join(render_step(step, part_chars=part_chars) for step in trace.steps) or "(no steps)"
    return clip(body, total_chars)


def render_decision(trace: SessionTrace, position: int, *, window: int, total_chars: int = TOTAL_CHARS,
                    part_chars: int = PART_CHARS) -> str:
    """Decision ``position`` (an index into ``trace.steps``) with up to ``window`` steps before it as context."""
    steps = trace.steps
    context = steps[max(0, position - window):position]
    parts = []
    if context:
        parts.append("# Context (earlier steps)\n\n" + "\n\n".join(render_step(s, part_chars=part_chars)
                                                                   for s in context))
    parts.append("# Decision to judge\n\n" + render_step(steps[position], part_chars=part_chars))
    return clip("\n\n".join(parts), total_chars)
