"""A custom judge criterion: a Python function over the trace, registered by name, used in a rubric that scores
real rollouts (the multi-step fact_finding environment, played by the oracle and by a policy that guesses).

    python examples/judge_criterion.py        (from the repository root; offline, a few seconds)

A plugin registers the same function through the ``proofgym.criteria`` entry point instead (see examples/plugin).
"""
import asyncio

from proofgym.judges import RubricScorer, register_criterion, rubric_set_from_data
from proofgym.policies import build_policy
from proofgym.rollouts import run_rollout


@register_criterion("example.asks_before_deciding")
def asks_before_deciding(ctx):
    """Outcome level: the share of the four hidden facts the agent revealed before it answered."""
    tools = [step.env_event.tool for step in ctx.steps_so_far if step.env_event is not None]
    asked = len(set(str(step.env_event.args) for step in ctx.steps_so_far
                    if step.env_event is not None and step.env_event.tool == "get_fact"))
    return min(asked, 4) / 4, f"{asked} distinct facts revealed, tools {tools}"


rubrics = rubric_set_from_data({
    "weights": {"env": 0.5, "event": 0.0, "outcome": 0.5},
    "outcome": {"criteria": [{"id": "asks", "description": "reveals facts before deciding", "weight": 1.0,
                              "function": "example.asks_before_deciding"}]},
}, source="examples/judge_criterion.py")
scorer = RubricScorer(rubrics)  # programmatic criteria only: no LLM judge needed

guess = build_policy("scripted", {"actions": [{"tool": "answer", "args": {"decision": "deny"}}]})
for name, policy in [("oracle", build_policy("oracle", {"env_name": "fact_finding"})), ("guess", guess)]:
    result = asyncio.run(run_rollout("fact_finding", seed=3, policy=policy))
    [score] = scorer.score_sync([result.session])
    verdict = score.outcome.criteria[0]
    print(f"{name:6} env return {result.total_return:.2f}  asks {verdict.score:.2f} ({verdict.reason})  "
          f"blended reward {score.reward.value:.2f}")
