"""Crafter's rubrics: the seed's criteria (``crafter_rl_stepwise_hosted_judge.toml``), programmatic where the trace
answers them, an LLM criterion otherwise.

- Event (each decision): ``unique_achievements`` 0.9 (programmatic: the decision unlocked a new achievement) and
  ``intent_alignment`` 0.1 (LLM: setup that finishes an imminent unlock).
- Outcome (the trajectory): ``goal_completion`` 0.6 and ``achievement_depth`` 0.4, both programmatic: the first
  from survival and the deepest crafted milestone, the second from the deepest tier of the tech tree reached.

They read what the environment recorded in each step's ``info``: ``unlocked`` (this decision's new achievements),
``achievements`` (all counts), ``end_reason`` and ``inventory`` of the last step.
"""

from __future__ import annotations

from typing import Any, Mapping

from proofgym.judges import CriterionContext, RubricSet, register_criterion, rubric_set_from_data

#: Crafter's tech tree, shallowest first: an achievement's tier is how deep in it the agent had to get.
TIERS: tuple[frozenset[str], ...] = (
    frozenset({"collect_wood", "collect_sapling", "collect_drink", "place_plant", "wake_up", "eat_cow",
               "defeat_zombie"}),
    frozenset({"place_table", "make_wood_pickaxe", "make_wood_sword", "eat_plant"}),
    frozenset({"collect_stone", "place_stone", "collect_coal", "make_stone_pickaxe", "make_stone_sword",
               "defeat_skeleton"}),
    frozenset({"place_furnace", "collect_iron"}),
    frozenset({"make_iron_pickaxe", "make_iron_sword", "collect_diamond"}),
)
#: ``goal_completion``'s milestones: the credit of the deepest one reached.
_MILESTONES = (({"make_iron_pickaxe", "make_iron_sword", "place_furnace", "collect_iron"}, 1.0),
               ({"make_stone_pickaxe", "make_stone_sword"}, 0.6),
               ({"make_wood_pickaxe", "make_wood_sword", "place_table"}, 0.3))


def _last_info(ctx: CriterionContext) -> Mapping[str, Any] | None:
    steps = ctx.steps_so_far
    return steps[-1].info if steps else None


def _unlocked(info: Mapping[str, Any] | None) -> set[str]:
    achievements = (info or {}).get("achievements")
    if not isinstance(achievements, Mapping):
        return set()
    return {str(name) for name, count in achievements.items() if isinstance(count, int) and count > 0}


@register_criterion("crafter.unique_achievements")
def unique_achievements(ctx: CriterionContext) -> tuple[float, str] | None:
    """1 when this decision unlocked an achievement new to the episode, else 0."""
    step = ctx.step
    if step is None:
        return None
    new = step.info.get("unlocked")
    if isinstance(new, list) and new:
        return 1.0, "unlocked " + ", ".join(map(str, new))
    return 0.0, "nothing new unlocked"


@register_criterion("crafter.achievement_depth")
def achievement_depth(ctx: CriterionContext) -> tuple[float, str] | None:
    """The deepest tier of the tech tree (:data:`TIERS`) with an unlocked achievement, over the 5 tiers."""
    unlocked = _unlocked(_last_info(ctx))
    depth = max((level + 1 for level, tier in enumerate(TIERS) if tier & unlocked), default=0)
    return depth / len(TIERS), f"deepest tier reached: {depth} of {len(TIERS)}"


@register_criterion("crafter.goal_completion")
def goal_completion(ctx: CriterionContext) -> tuple[float, str] | None:
    """Half for surviving to the end (not dying), half for the deepest crafted milestone: iron tools, a furnace
    or iron 1.0, stone tools 0.6, a table or wood tools 0.3."""
    info = _last_info(ctx)
    if info is None:
        return None
    unlocked = _unlocked(info)
    milestone = max((credit for names, credit in _MILESTONES if names & unlocked), default=0.0)
    survived = info.get("end_reason") != "death"
    return 0.5 * survived + 0.5 * milestone, f"{'survived' if survived else 'died'}; milestone credit {milestone}"


CRAFTER_RUBRICS: RubricSet = rubric_set_from_data({
    "weights": {"env": 0.2, "event": 0.4, "outcome": 0.4},
    "event": {
        "id": "crafter/event", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "Each decision unlocks new Crafter achievements or sets one up.",
        "criteria": [
            {"id": "unique_achievements", "weight": 0.9, "scale": "binary",
             "function": unique_achievements,
             "description": "Return 1 when this decision explicitly unlocks a brand-new Crafter achievement "
                            "(inventory or status text confirms it this turn). Otherwise return 0."},
            {"id": "intent_alignment", "weight": 0.1, "scale": "bounded",
             "description": "Use at most 0.3 to acknowledge tightly coupled setup that finishes the last "
                            "prerequisite; keep <= 0.1 when the agent only repositions or gathers without an "
                            "imminent unlock."},
        ],
    },
    "outcome": {
        "id": "crafter/outcome", "version": "1", "aggregation": "weighted_sum",
        "goal_text": "Survive and get deep into Crafter's tech tree.",
        "criteria": [
            {"id": "goal_completion", "weight": 0.6, "scale": "bounded", "function": goal_completion,
             "description": "Full credit when the agent ends with strong survival metrics and a clear crafted "
                            "milestone (e.g., iron tools, furnace)."},
            {"id": "achievement_depth", "weight": 0.4, "scale": "bounded", "function": achievement_depth,
             "description": "Partial credit for intermediate achievements (saplings, wood/stone tools) that set up "
                            "future success."},
        ],
    },
}, source="proofgym.crafter._rubrics")
