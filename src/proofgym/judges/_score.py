"""Scoring trajectories with a rubric set, and blending the result into the reward a trainer gets.

:class:`RubricScorer` asks every decision of a trajectory (event rubric) and the whole trajectory (outcome rubric):
criteria that name a function are computed by the :class:`~proofgym.judges.ProgrammaticJudge`, the others are asked
of the LLM judge, all of a batch's LLM items in one ``judge`` call so that the judge can batch, de-duplicate and run
them concurrently.

The blend (``[rubric.weights]``)::

    reward = w_env · env_return + w_event · Σ_steps event_total + w_outcome · outcome_total

An invalid verdict makes its component abstain: the component adds nothing, the reward says which components
abstained (``abstained``), and the weights are not silently re-normalised. ``per_decision`` splits the reward over
the steps for step-level credit: step *i* gets ``w_env · r_i + w_event · event_total_i``, and the last step also gets
``w_outcome · outcome_total`` and the part of the environment's return no step reward carries; they add up to the
reward.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from proofgym.judges._programmatic import ProgrammaticJudge
from proofgym.judges._rubric import Rubric, RubricSet, RubricWeights
from proofgym.judges._types import CriterionVerdict, Judge, JudgeItem, JudgeVerdict, Level
from proofgym.judges._view import render_decision, render_trajectory
from proofgym.traces import EventReward, OutcomeReward, SessionTrace

#: ``OutcomeReward.kind`` / ``source`` of a blended reward and ``EventReward.kind`` / ``source`` of a judged decision.
BLENDED_KIND, JUDGE_SOURCE, EVENT_KIND = "blended", "judge", "evaluator"


@dataclass(frozen=True, slots=True)
class LevelScore:
    """One rubric applied once: to a decision (``level="event"``, ``step_index`` set) or to the whole trajectory.
    ``total`` is the rubric's aggregate, ``None`` when a criterion's verdict is invalid (the level abstains)."""

    level: Level
    rubric: str
    criteria: tuple[CriterionVerdict, ...]
    total: float | None
    step_index: int | None = None
    verdicts: tuple[JudgeVerdict, ...] = ()

    @property
    def valid(self) -> bool:
        return self.total is not None

    def calls(self) -> list[dict[str, Any]]:
        return [dict(call) for verdict in self.verdicts for call in verdict.calls]

    def to_dict(self, *, calls: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "level": self.level, "rubric": self.rubric, "step_index": self.step_index, "total": self.total,
            "valid": self.valid, "criteria": [c.to_dict() for c in self.criteria],
            "invalid": [{"judge": v.judge, "error_kind": v.error_kind, "reason": v.reason}
                        for v in self.verdicts if not v.valid],
        }
        if calls:
            data["calls"] = self.calls()
        return data


@dataclass(frozen=True, slots=True)
class BlendedReward:
    """The reward of one trajectory: its ``value``, each component (``None``: abstained, or no rubric at that
    level), the ``weights``, which components ``abstained`` and the ``per_decision`` split (adds up to ``value``)."""

    value: float
    env_return: float
    event_total: float | None
    outcome_total: float | None
    weights: RubricWeights
    abstained: tuple[str, ...]
    per_decision: tuple[float, ...]

    @property
    def marked(self) -> bool:
        """Whether a component abstained (a trainer may drop or down-weight the sample)."""
        return bool(self.abstained)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "env_return": self.env_return, "event_total": self.event_total,
                "outcome_total": self.outcome_total, "weights": self.weights.model_dump(),
                "abstained": list(self.abstained), "marked": self.marked, "per_decision": list(self.per_decision)}


@dataclass(frozen=True, slots=True)
class TrajectoryScore:
    """Everything judged of one trajectory: one :class:`LevelScore` per decision, one for the outcome, the blend."""

    session_id: str
    events: tuple[LevelScore, ...]
    outcome: LevelScore | None
    reward: BlendedReward

    def to_dict(self, *, calls: bool = True) -> dict[str, Any]:
        return {"session_id": self.session_id, "reward": self.reward.to_dict(),
                "events": [e.to_dict(calls=calls) for e in self.events],
                "outcome": None if self.outcome is None else self.outcome.to_dict(calls=calls)}

    def apply(self, trace: SessionTrace) -> SessionTrace:
        """A copy of ``trace`` with the judged results written in: each valid decision's event total as an
        ``EventReward`` (kind ``evaluator``, source ``judge``, its criteria's verdicts as the annotation), and the
        blended reward as the ``OutcomeReward``'s total (kind ``blended``, source ``judge``; its ``score`` stays
        the environment's official outcome score, and its annotation holds the blend, the outcome rubric's
        verdicts and the environment's own outcome reward). An earlier judgement's rewards are replaced, not added
        to."""
        by_index = {e.step_index: e for e in self.events}
        steps = []
        for step in trace.steps:
            rewards = [r for r in step.event_rewards if r.source != JUDGE_SOURCE]
            event = by_index.get(step.index)
            if event is not None and event.valid:
                rewards.append(EventReward(value=float(event.total), kind=EVENT_KIND, key=event.rubric,  # type: ignore[arg-type]
                                           source=JUDGE_SOURCE, annotation=event.to_dict()))
            steps.append(dataclasses.replace(step, event_rewards=rewards))
        environment = _environment_outcome(trace)
        annotation = {**self.reward.to_dict(), "environment": environment,
                      "outcome": None if self.outcome is None else self.outcome.to_dict(),
                      "invalid_events": [e.to_dict() for e in self.events if not e.valid]}
        # ``score`` stays the environment's official outcome score: the rubric's outcome total is in the annotation.
        outcome = OutcomeReward(total=self.reward.value, steps=len(trace.steps), kind=BLENDED_KIND,
                                score=None if environment is None else environment.get("score"),
                                source=JUDGE_SOURCE, annotation=annotation)
        return dataclasses.replace(trace, steps=steps, outcome_reward=outcome)


def _environment_outcome(trace: SessionTrace) -> dict[str, Any] | None:
    """The environment's own outcome reward (unwrapped from an earlier judgement's blend)."""
    outcome = trace.outcome_reward
    if outcome is None:
        return None
    if outcome.source == JUDGE_SOURCE and outcome.kind == BLENDED_KIND and isinstance(outcome.annotation, Mapping):
        return outcome.annotation.get("environment")
    return dataclasses.asdict(outcome)


def env_return(trace: SessionTrace) -> float:
    """The environment's return: its outcome reward's total (that of the environment, not an earlier blend),
    else the sum of the step rewards."""
    environment = _environment_outcome(trace)
    if environment is not None:
        return float(environment["total"])
    return float(sum(step.reward for step in trace.steps))


def blend(trace: SessionTrace, weights: RubricWeights, events: Sequence[LevelScore], outcome: LevelScore | None,
          *, has_event_rubric: bool) -> BlendedReward:
    """The blended reward of ``trace`` (see the module docstring)."""
    env = env_return(trace)
    abstained: list[str] = []
    event_total: float | None = None
    if has_event_rubric:
        if events and all(e.valid for e in events):
            event_total = sum(float(e.total) for e in events)  # type: ignore[arg-type, misc]
        elif events:
            abstained.append("event")
        else:
            event_total = 0.0
    outcome_total: float | None = None
    if outcome is not None:
        if outcome.valid:
            outcome_total = float(outcome.total)  # type: ignore[arg-type]
        else:
            abstained.append("outcome")
    value = weights.env * env
    if event_total is not None:
        value += weights.event * event_total
    if outcome_total is not None:
        value += weights.outcome * outcome_total
    by_index = {e.step_index: e for e in events}
    per_decision = []
    for step in trace.steps:
        event = by_index.get(step.index)
        part = weights.env * step.reward
        if event is not None and event.valid and event_total is not None:
            part += weights.event * float(event.total)  # type: ignore[arg-type]
        per_decision.append(part)
    if per_decision:
        per_decision[-1] += value - sum(per_decision)
    return BlendedReward(value=value, env_return=env, event_total=event_total, outcome_total=outcome_total,
                         weights=weights, abstained=tuple(abstained), per_decision=tuple(per_decision))


class RubricScorer:
    """Scores trajectories with ``rubrics``: programmatic criteria in-process, the others with ``judge``.

    A rubric set with LLM criteria needs a ``judge``; without one, ``missing_judge="skip"`` drops those criteria
    (each level keeps its programmatic ones; the blend weights stay) and ``"error"`` (the default) refuses with
    the criteria named. ``group`` (per trajectory) is passed to the judge for relative judging.
    """

    def __init__(self, rubrics: RubricSet, *, judge: Judge | None = None,
                 programmatic: ProgrammaticJudge | None = None,
                 missing_judge: Literal["error", "skip"] = "error") -> None:
        if judge is None and rubrics.needs_llm():
            if missing_judge != "skip":
                raise ValueError(f"criteria {rubrics.needs_llm()} need an LLM judge: pass judge=, or drop them "
                                 "with missing_judge='skip'")
            rubrics = rubrics.programmatic_only()
        self.rubrics = rubrics
        self.judge = judge
        self.programmatic = programmatic or ProgrammaticJudge()
        self._parts: dict[str, tuple[Rubric | None, Rubric | None]] = {}
        for level, rubric in rubrics.rubrics():
            computed = {c.id for c in rubric.criteria if c.programmatic}
            asked = {c.id for c in rubric.criteria} - computed
            self._parts[level] = (rubric.only(computed) if computed else None, rubric.only(asked) if asked else None)

    @property
    def judges(self) -> list[str]:
        """The names of the judges used (programmatic first)."""
        names = []
        if any(computed is not None for computed, _ in self._parts.values()):
            names.append(self.programmatic.name)
        if self.judge is not None and any(asked is not None for _, asked in self._parts.values()):
            names.append(self.judge.name)
        return names

    async def score(self, traces: Sequence[SessionTrace], *,
                    groups: Sequence[str | None] | None = None) -> list[TrajectoryScore]:
        """One :class:`TrajectoryScore` per trace, in order. Never raises for what a judge or a trace holds."""
        if groups is not None and len(groups) != len(traces):
            raise ValueError(f"groups: expected one per trace ({len(traces)}), got {len(groups)}")
        # (trace position, level, step index) -> the JudgeItem of each part
        plan: list[tuple[int, Level, int | None, JudgeItem | None, JudgeItem | None]] = []
        for position, trace in enumerate(traces):
            group = None if groups is None else groups[position]
            if "event" in self._parts:
                for index, step in enumerate(trace.steps):
                    text = render_decision(trace, index, window=self.rubrics.event_window)
                    plan.append((position, "event", step.index,
                                 *self._items("event", text, trace, step.index, group)))
            if "outcome" in self._parts:
                plan.append((position, "outcome", None,
                             *self._items("outcome", render_trajectory(trace), trace, None, group)))
        computed = [self.programmatic.judge_one(c) if c is not None else None for _, _, _, c, _ in plan]
        asked_items = [a for *_, a in plan if a is not None]
        asked = iter(await self._ask(asked_items))
        answers = [next(asked) if a is not None else None for *_, a in plan]

        levels: list[tuple[list[LevelScore], LevelScore | None]] = [([], None) for _ in traces]
        for (position, level, step_index, _, _), one, other in zip(plan, computed, answers):
            rubric = self.rubrics.event if level == "event" else self.rubrics.outcome
            verdicts = tuple(v for v in (one, other) if v is not None)
            by_id = {c.id: c for v in verdicts for c in v.criteria}
            criteria = tuple(by_id.get(c.id, CriterionVerdict(c.id, None, "not judged")) for c in rubric.criteria)  # type: ignore[union-attr]
            total = rubric.total({c.id: c.score for c in criteria})  # type: ignore[union-attr]
            result = LevelScore(level, rubric.label, criteria, total, step_index, verdicts)  # type: ignore[union-attr]
            events, outcome = levels[position]
            if level == "event":
                events.append(result)
            else:
                levels[position] = (events, result)
        return [TrajectoryScore(trace.session_id, tuple(events), outcome,
                                blend(trace, self.rubrics.weights, events, outcome,
                                      has_event_rubric="event" in self._parts))
                for trace, (events, outcome) in zip(traces, levels)]

    def score_sync(self, traces: Sequence[SessionTrace], *,
                   groups: Sequence[str | None] | None = None) -> list[TrajectoryScore]:
        """Blocking :meth:`score` (not from inside a running event loop)."""
        return asyncio.run(self.score(traces, groups=groups))

    def _items(self, level: Level, text: str, trace: SessionTrace, step_index: int | None,
               group: str | None) -> tuple[JudgeItem | None, JudgeItem | None]:
        computed, asked = self._parts[level]
        return tuple(None if rubric is None else JudgeItem(level, rubric, text, trace, step_index, group)  # type: ignore[return-value]
                     for rubric in (computed, asked))

    async def _ask(self, items: list[JudgeItem]) -> list[JudgeVerdict]:
        if not items:
            return []
        assert self.judge is not None
        try:
            verdicts = list(await self.judge.judge(items))
            if len(verdicts) != len(items):
                raise ValueError(f"the judge returned {len(verdicts)} verdicts for {len(items)} items")
        except Exception as exc:  # a judge must not raise; if it does, its items abstain
            reason = f"the judge failed: {type(exc).__name__}: {exc}"[:500]
            return [JudgeVerdict.failed(self.judge.name, item.rubric, "crash", reason) for item in items]
        return verdicts
