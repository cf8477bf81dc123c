"""A rubric built in Python passes its criterion functions by object; verdicts and traces name them as before (by
the name they are registered under), and a rubric file still names them by that name (entry points)."""

from __future__ import annotations

import pytest

from proofgym.core import Registry, RegistryError
from proofgym.judges import (
    CRITERIA,
    RUBRIC_SETS,
    Criterion,
    ProgrammaticJudge,
    RubricScorer,
    criterion_name,
    register_criterion,
    rubric_set_from_data,
)
from proofgym.traces import EnvEvent, SessionTrace, StepTrace


def trace() -> SessionTrace:
    steps = [StepTrace(index=i, observation=f"obs {i}", action={"tool": "t"}, reward=0.0,
                       env_event=EnvEvent(tool="t", args={}, result={"ok": True}, reward=0.0), done=i == 1)
             for i in range(2)]
    return SessionTrace(session_id="s1", run_id="r1", env_name="toy", steps=steps)


def two_steps(ctx) -> tuple[float, str]:
    return len(ctx.steps_so_far) / 2, "counted"


def rubric(function):
    return rubric_set_from_data({"criteria": [{"id": "steps", "description": "d", "function": function}]},
                                source="t")


def test_a_registered_function_by_object_is_known_by_its_registered_name() -> None:
    register_criterion("test.by_object", two_steps)
    try:
        by_object, by_name = rubric(two_steps), rubric("test.by_object")
        [criterion] = by_object.outcome.criteria
        assert criterion.function == "test.by_object" and criterion.callable is two_steps
        assert criterion.model_dump() == by_name.outcome.criteria[0].model_dump()  # the same data, JSON-able
        scores = [RubricScorer(r).score_sync([trace()])[0] for r in (by_object, by_name)]
        assert scores[0].to_dict(calls=False) == scores[1].to_dict(calls=False)  # what a trace stores: identical
        assert scores[0].outcome.criteria[0].judge == "programmatic:test.by_object"
    finally:
        CRITERIA.unregister("test.by_object")


def test_an_unregistered_function_needs_no_registry() -> None:
    def local(ctx) -> float:
        return 1.0

    criterion = Criterion(id="c", description="d", function=local)
    assert criterion.function == criterion_name(local) == f"{__name__}:{local.__qualname__}"
    assert criterion.function not in CRITERIA
    [score] = RubricScorer(rubric(local)).score_sync([trace()])
    assert score.outcome.total == 1.0


def test_the_shipped_rubrics_pass_objects_under_their_entry_point_names() -> None:
    shipped = [RUBRIC_SETS.get(name) for name in ("verilog", "crafter", "fact_finding")]
    for rubrics in shipped:
        for _, level in rubrics.rubrics():
            for criterion in level.criteria:
                if criterion.programmatic:
                    assert criterion.callable is not None
                    assert CRITERIA.get(criterion.function) is criterion.callable  # the entry point: the same object
    assert [c.function for c in shipped[0].event.criteria] == ["verilog.compilation_success",
                                                                   "verilog.process_efficiency"]


def test_a_function_and_the_lazy_target_naming_it_are_one_registration() -> None:
    registry: Registry[object] = Registry("thing", "proofgym.test-no-such-group")
    target = f"{two_steps.__module__}:{two_steps.__qualname__}"
    registry.register("a", target)
    registry.register("a", two_steps)  # the module registering its own function, after its entry point
    assert registry.target("a") is two_steps
    registry.register("b", two_steps)
    registry.register("b", target)  # the entry point read after the module registered it
    assert registry.get("b") is two_steps
    with pytest.raises(RegistryError, match="already registered"):
        registry.register("a", "elsewhere:two_steps")
    with pytest.raises(RegistryError, match="already registered"):
        registry.register("a", rubric)


def test_programmatic_judge_uses_the_object_not_the_registry() -> None:
    empty: Registry = Registry("programmatic criterion", "proofgym.test-no-such-group")
    from proofgym.judges import JudgeItem

    item = JudgeItem(rubric=rubric(two_steps).outcome, level="outcome", candidate="", trace=trace())
    [verdict] = ProgrammaticJudge(empty).judge_one(item).criteria
    assert verdict.score == 1.0 and verdict.reason == "counted"
