"""The Verilog environment's rubrics (the reference's): what can be computed from the trace is, only design quality
needs an LLM.

- Event (each decision): compilation success 0.7 + process efficiency 0.3.
- Outcome (the trajectory): tests passed 0.8 + design quality 0.2 (LLM).

The programmatic criteria read what the environment recorded in each step: the tool called (``env_event.tool``),
the design revision after it (``info["revision"]``), and the judge's verdict on judged steps (``verification``).
"""

from __future__ import annotations

from typing import Any

from proofgym.judges import CriterionContext, RubricSet, register_criterion, rubric_set_from_data
from proofgym.traces import StepTrace

_JUDGED_TOOLS = frozenset({"compile", "simulate", "submit"})


def _tool(step: StepTrace) -> str | None:
    return step.env_event.tool if step.env_event is not None else None


def _compiled(step: StepTrace) -> bool | None:
    """Whether a judged step's design compiled (``None``: the step judged nothing, or its judge could not run)."""
    if _tool(step) not in _JUDGED_TOOLS or step.verification is None:
        return None
    verdict = step.verification.verdict
    if verdict.get("outcome") == "invalid":
        return None
    if verdict.get("outcome") == "certified":
        return True
    evidence = verdict.get("evidence") or {}
    phase = evidence.get("phase")
    return phase == "simulate" or (phase == "compile" and "compile_log" not in evidence)


@register_criterion("verilog.compilation_success")
def compilation_success(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 when the design as this decision left it compiles, 0 when it does not or was never compiled.

    A judged step (compile / simulate / submit) answers itself; a ``write_file`` is answered by the first later
    judged step of the same design revision. A refused call, or a reply that was not a tool call, is 0.
    """
    step = ctx.step
    if step is None:
        return None
    if step.info.get("error") or _tool(step) is None:
        return 0.0, "the call was refused or was not a tool call"
    revision = step.info.get("revision")
    for later in (s for s in ctx.trace.steps if s.index >= step.index):
        if later.info.get("revision") != revision:
            continue
        compiled = _compiled(later)
        if compiled is not None:
            where = "this step" if later.index == step.index else f"step {later.index}"
            return (1.0, f"compiled ({where})") if compiled else (0.0, f"did not compile ({where})")
        if later.index != step.index and _tool(later) in _JUDGED_TOOLS:
            return None  # the judge could not run on this revision: no evidence either way
    return 0.0, "this design revision was never compiled"


@register_criterion("verilog.process_efficiency")
def process_efficiency(ctx: CriterionContext) -> tuple[float, str] | None:
    """0 for a redundant decision, else 1: repeating a tool on a design revision it already ran on (compile or
    simulate the same revision again, rewrite identical content), or a refused call; 1 otherwise."""
    step = ctx.step
    if step is None:
        return None
    tool = _tool(step)
    if step.info.get("error") or tool is None:
        return 0.0, "a refused call or no tool call"
    revision = step.info.get("revision")
    earlier = [s for s in ctx.trace.steps if s.index < step.index and "revision" in s.info]
    if tool == "write_file" and earlier and earlier[-1].info.get("revision") == revision:
        return 0.0, f"the design is unchanged since step {earlier[-1].index}"
    for before in earlier:
        if tool in _JUDGED_TOOLS and _tool(before) == tool and before.info.get("revision") == revision:
            return 0.0, f"{tool} already ran on this revision at step {before.index}"
    return 1.0, "not redundant"


@register_criterion("verilog.tests_passed")
def tests_passed(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 when the last submitted design passed the testbench, 0 when it failed or nothing was submitted; abstains
    when the last submission's judge could not run."""
    submits = [s for s in ctx.trace.steps if _tool(s) == "submit" and s.verification is not None]
    if not submits:
        return 0.0, "nothing was submitted"
    verdict: dict[str, Any] = dict(submits[-1].verification.verdict)  # type: ignore[union-attr]
    outcome = verdict.get("outcome")
    if outcome == "invalid":
        return None
    if outcome == "certified":
        return 1.0, "the submitted design passed every test"
    return 0.0, f"the submitted design failed ({verdict.get('reason') or 'refuted'})"


VERILOG_RUBRICS: RubricSet = rubric_set_from_data({
    "weights": {"env": 0.2, "event": 0.4, "outcome": 0.4},
    "event": {
        "id": "verilog/event", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "Each decision moves the design towards one that compiles, without wasted operations.",
        "criteria": [
            {"id": "compilation_success", "weight": 0.7, "scale": "binary", "function": compilation_success,
             "description": "1.0 when the design as this decision left it compiles, 0.0 for errors."},
            {"id": "process_efficiency", "weight": 0.3, "scale": "binary", "function": process_efficiency,
             "description": "Penalises redundant operations: repeating a tool on an unchanged design."},
        ],
    },
    "outcome": {
        "id": "verilog/outcome", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "A Verilog module that meets its specification and passes its testbench.",
        "criteria": [
            {"id": "tests_passed", "weight": 0.8, "scale": "binary", "function": tests_passed,
             "description": "Full credit when all tests pass."},
            {"id": "design_quality", "weight": 0.2, "scale": {"kind": "bounded", "min": 0, "max": 10},
             "description": "Code clarity and documentation of the final design: meaningful names, comments where "
                            "the intent is not obvious, no dead or duplicated logic, synthesizable constructs."},
        ],
    },
}, source="proofgym.verilog._rubrics")
