"""Programmatic criteria: registered Python functions over a trace, for what can be computed (compiled, tests
passed, redundant tool calls, an achievement unlocked). Deterministic, and run in-process.

A criterion function takes a :class:`CriterionContext` and returns a score on the criterion's scale: a number, a
``bool`` (1 / 0), or ``(score, reason)``; ``None`` abstains (the trace does not hold what it needs). Register one
with :func:`register_criterion` (or the ``proofgym.criteria`` entry-point group)::

    @register_criterion("mine.compiled")
    def compiled(ctx: CriterionContext) -> tuple[float, str]:
        ...

A rubric built in Python passes the function itself (``{"id": "compiled", "function": compiled, ...}``); verdicts
and traces name it by its registered name (``mine.compiled``) all the same. A rubric file names it by that name,
which is looked up in the registry (entry points included).

A function that raises, or returns something not on the scale, gives an invalid verdict (it abstains), never 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar, overload

from proofgym.core import ErrorKind, Registry
from proofgym.judges._rubric import CRITERION_NAME_ATTRIBUTE, Criterion
from proofgym.judges._types import CriterionVerdict, JudgeItem, JudgeVerdict, Level
from proofgym.traces import SessionTrace, StepTrace


@dataclass(frozen=True, slots=True)
class CriterionContext:
    """What a programmatic criterion reads: the trace, the level, and (event level) the decision judged."""

    trace: SessionTrace
    level: Level
    criterion: Criterion
    step_index: int | None = None

    @property
    def step(self) -> StepTrace | None:
        """The decision judged (event level), else ``None``."""
        if self.step_index is None:
            return None
        for step in self.trace.steps:
            if step.index == self.step_index:
                return step
        return None

    @property
    def steps_so_far(self) -> list[StepTrace]:
        """Every step up to and including the decision judged (all of them at outcome level)."""
        if self.step_index is None:
            return list(self.trace.steps)
        return [s for s in self.trace.steps if s.index <= self.step_index]


CriterionFunction = Callable[[CriterionContext], Any]


def _callable(value: Any) -> Any:
    if not callable(value):
        raise TypeError(f"expected a function of a CriterionContext, got {type(value).__name__}")
    return value


CRITERIA: Registry[CriterionFunction] = Registry("programmatic criterion", "proofgym.criteria", check=_callable)


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def register_criterion(name: str) -> Callable[[_F], _F]: ...


@overload
def register_criterion(name: str, function: _F) -> _F: ...


@overload
def register_criterion(name: str, function: str) -> str: ...


def register_criterion(name: str, function: CriterionFunction | str | None = None) -> Any:
    """Register a programmatic criterion (a function, or a lazy ``"module:attribute"``); used bare it is a
    decorator: ``@register_criterion("name")``. A function registered here is known by ``name`` in verdicts and
    traces, also where a rubric passes it by object."""
    if function is None:
        def decorator(fn: _F) -> _F:
            return register_criterion(name, fn)
        return decorator
    CRITERIA.register(name, function)
    if not isinstance(function, str):
        _named(function, name)
    return function


def _named(function: CriterionFunction, name: str) -> None:
    """Mark ``function`` as the criterion ``name`` (a function registered under a second name keeps its first)."""
    if callable(function) and getattr(function, CRITERION_NAME_ATTRIBUTE, None) is None:
        try:
            setattr(function, CRITERION_NAME_ATTRIBUTE, name)
        except (AttributeError, TypeError):  # a builtin or a slotted object: known by module:qualname
            pass


class ProgrammaticJudge:
    """Computes every criterion of an item that names a ``function``, with the registered functions."""

    name = "programmatic"

    def __init__(self, registry: Registry[CriterionFunction] = CRITERIA) -> None:
        self._registry = registry

    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        return [self.judge_one(item) for item in items]

    def judge_one(self, item: JudgeItem) -> JudgeVerdict:
        started = time.perf_counter()
        if item.trace is None:
            return JudgeVerdict.failed(self.name, item.rubric, ErrorKind.MALFORMED.value,
                                       "a programmatic judge needs the trace")
        verdicts, problems = [], []
        for criterion in item.rubric.criteria:
            verdict = self._criterion(item, criterion)
            verdicts.append(verdict)
            if not verdict.valid:
                problems.append(f"{criterion.id}: {verdict.reason}")
        return JudgeVerdict(judge=self.name, criteria=tuple(verdicts),
                            error_kind=ErrorKind.CRASH.value if problems else None, reason="; ".join(problems),
                            meta={"judge_s": time.perf_counter() - started})

    def _criterion(self, item: JudgeItem, criterion: Criterion) -> CriterionVerdict:
        name = f"{self.name}:{criterion.function}"
        if criterion.function is None:
            return CriterionVerdict(criterion.id, None, "not a programmatic criterion (it names no function)", name)
        try:
            function = criterion.callable or self._registry.get(criterion.function)
            value = function(CriterionContext(item.trace, item.level, criterion, item.step_index))  # type: ignore[arg-type]
        except Exception as exc:  # a criterion's bug abstains; it never crashes a run nor scores 0
            return CriterionVerdict(criterion.id, None, f"{type(exc).__name__}: {exc}"[:500], name)
        reason = ""
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
            value, reason = value
        if value is None:
            return CriterionVerdict(criterion.id, None, reason or "the trace does not hold what it needs", name)
        if isinstance(value, bool):
            value = 1.0 if value else 0.0
        problem = criterion.scale.problem(value)
        if problem is not None:
            return CriterionVerdict(criterion.id, None, f"returned a score off its scale: {problem}", name)
        return CriterionVerdict(criterion.id, float(value), reason, name)
