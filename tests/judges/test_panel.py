"""Panels: members run concurrently, failures abstain, per-criterion combination independent of the members' order."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.judges import Criterion, Judge, JudgeItem, LLMJudge, Rubric
from proofgym.judges._panel import Panel, combine, on_scale
from proofgym.runtime import RuntimeConfig

from ._corpus import RUBRIC as ARITH
from ._corpus import WRONG_ANSWER
from ._fake_judges import (FakeJudgeServer, Gullible, RaisingJudge, Scripted, StaticJudge, malformed, rate_limited,
                           server_error)

RUBRIC = Rubric(id="r", criteria=(
    Criterion(id="bounded", description="a bounded criterion", scale={"kind": "bounded", "min": 0, "max": 10}),
    Criterion(id="binary", description="a binary criterion", scale="binary"),
    Criterion(id="choice", description="a choices criterion", scale=[1, 2, 3]),
))
ITEM = JudgeItem(level="outcome", rubric=RUBRIC, candidate="an answer")


def judged(panel: Panel, items=(ITEM,)):
    return asyncio.run(panel.judge(list(items)))


def test_a_panel_is_a_judge():
    assert isinstance(Panel([StaticJudge("a", {})]), Judge)


@pytest.mark.parametrize(("aggregate", "scores", "expected"), [
    ("mean", [1, 2, 6], 3.0),
    ("median", [1, 2, 6], 2.0),
    ("median", [1, 2, 6, 9], 4.0),
    ("majority", [1, 1, 6], 1.0),
    ("majority", [0, 1], 0.0),
    ("majority", [1, 0, 1, 0], 0.0),
    ("majority", [3, 1, 2], 2.0),
    ("majority", [1, 2, 3, 4], 2.0),
    ("majority", [5, 5, 9, 9, 7], 5.0),
])
def test_each_aggregate_combines_as_documented(aggregate, scores, expected):
    assert combine(scores, aggregate) == expected


def test_the_mean_of_equal_scores_is_that_score():
    assert combine([0.9443141709217409] * 3, "mean") == 0.9443141709217409


def test_a_binary_majority_tie_is_conservative():
    panel = Panel([StaticJudge("yes", {"binary": 1}), StaticJudge("no", {"binary": 0})], aggregate="majority")
    assert judged(panel)[0].scores()["binary"] == 0.0


def test_a_discrete_mean_is_taken_to_the_nearest_scale_value_lower_when_halfway():
    assert on_scale(0.5, RUBRIC.criterion("binary").scale) == 0.0
    assert on_scale(2 / 3, RUBRIC.criterion("binary").scale) == 1.0
    assert on_scale(2.5, RUBRIC.criterion("choice").scale) == 2.0
    assert on_scale(7.25, RUBRIC.criterion("bounded").scale) == 7.25
    members = [StaticJudge(n, {"bounded": b, "binary": y, "choice": c})
               for n, b, y, c in (("a", 10, 1, 3), ("b", 5, 1, 2), ("c", 0, 0, 3))]
    verdict = judged(Panel(members, aggregate="mean"))[0]
    assert verdict.scores() == {"bounded": 5.0, "binary": 1.0, "choice": 3.0}
    assert verdict.valid
    assert RUBRIC.total(verdict.scores()) is not None  # on the scale: the rubric's total does not abstain
    assert "= 0.666667, taken to 1 on the scale" in verdict.criteria[1].reason


def test_members_run_concurrently():
    members = [StaticJudge(f"slow{i}", {"bounded": 1, "binary": 1, "choice": 1}, delay_s=1.5) for i in range(4)]
    started = time.monotonic()
    verdict = judged(Panel(members))[0]
    assert time.monotonic() - started < 4.5  # one after another: 6 s
    assert verdict.valid
    assert max(m.started[0] for m in members) - min(m.started[0] for m in members) < 0.1


def test_a_member_that_raises_is_excluded_and_never_propagates():
    panel = Panel([RaisingJudge("boom"), StaticJudge("a", {"bounded": 4, "binary": 1, "choice": 2}),
                   StaticJudge("b", {"bounded": 6, "binary": 1, "choice": 2})])
    verdict = judged(panel)[0]
    assert verdict.valid
    assert verdict.scores() == {"bounded": 5.0, "binary": 1.0, "choice": 2.0}
    boom = next(m for m in verdict.meta["members"] if m["judge"] == "boom")
    assert boom["error_kind"] == "crash" and "RuntimeError: judge exploded" in boom["reason"]


def test_invalid_member_verdicts_are_excluded_per_criterion():
    panel = Panel([StaticJudge("a", {"bounded": 2, "binary": None, "choice": 3}),
                   StaticJudge("b", {"bounded": 4, "binary": 0, "choice": 7}),  # 7 is off the choices scale
                   StaticJudge("c", {"bounded": 9, "binary": 0, "choice": 1}, error_kind="timeout")])
    verdict = judged(panel)[0]
    # c's bounded 9 is a valid criterion verdict of a partly failed judge; 7 is off its scale and left out.
    assert verdict.scores() == {"bounded": 5.0, "binary": 0.0, "choice": 2.0}


def test_fewer_than_min_valid_members_make_the_criterion_abstain_never_zero():
    panel = Panel([StaticJudge("a", {"bounded": 3, "binary": 1, "choice": None}),
                   StaticJudge("b", {"bounded": 5, "binary": None, "choice": None}),
                   RaisingJudge("c")], min_valid=2)
    verdict = judged(panel)[0]
    assert verdict.scores() == {"bounded": 4.0, "binary": None, "choice": None}
    assert not verdict.valid and verdict.error_kind == "crash"
    assert "1 of 3 judges gave a valid verdict, 2 needed" in verdict.criteria[1].reason
    assert RUBRIC.total(verdict.scores()) is None


def test_every_member_failing_makes_the_panel_verdict_invalid():
    verdict = judged(Panel([RaisingJudge("x"), RaisingJudge("y")]))[0]
    assert not verdict.valid
    assert set(verdict.scores().values()) == {None}
    assert verdict.error_kind == "crash"


def test_the_verdict_records_members_calls_and_the_panel_name():
    a = StaticJudge("a", {"bounded": 1, "binary": 1, "choice": 1}, calls=[{"call": "a1"}, {"call": "a2"}])
    b = StaticJudge("b", {"bounded": 3, "binary": 1, "choice": 1}, calls=[{"call": "b1"}])
    panel = Panel([b, a], aggregate="median")
    assert panel.name == "panel:median[a,b]"
    verdict = judged(panel)[0]
    assert verdict.judge == panel.name
    assert {c.judge for c in verdict.criteria} == {panel.name}
    assert [m["judge"] for m in verdict.meta["members"]] == ["a", "b"]
    assert [c["call"] for c in verdict.calls] == ["a1", "a2", "b1"]
    assert verdict.meta["aggregate"] == "median"
    assert verdict.reason.startswith("median of 2 judges")
    assert Panel([a], name="mine").name == "mine"


def test_a_member_answering_the_wrong_number_of_verdicts_fails():
    class Short(StaticJudge):
        async def judge(self, items):
            return (await super().judge(items))[:-1]

    panel = Panel([Short("short", {"bounded": 10, "binary": 1, "choice": 3}),
                   StaticJudge("ok", {"bounded": 2, "binary": 0, "choice": 1})])
    two = [ITEM, JudgeItem(level="outcome", rubric=RUBRIC, candidate="another")]
    assert [v.scores() for v in judged(panel, two)] == [{"bounded": 2.0, "binary": 0.0, "choice": 1.0}] * 2


def test_items_keep_their_order_and_an_empty_batch_is_empty():
    panel = Panel([StaticJudge("a", {"bounded": 1})])
    items = [JudgeItem(level="outcome", rubric=RUBRIC.only({"bounded"}), candidate=str(i)) for i in range(3)]
    assert len(judged(panel, items)) == 3
    assert judged(panel, []) == []


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"judges": []}, "at least one judge"),
    ({"aggregate": "mode"}, "aggregate must be one of mean, median, majority"),
    ({"min_valid": 0}, "min_valid must be an integer from 1 to the 1 judges"),
    ({"min_valid": 2}, "min_valid must be an integer from 1 to the 1 judges"),
])
def test_a_bad_panel_is_refused_in_one_sentence(kwargs, message):
    arguments = {"judges": [StaticJudge("a", {})], **kwargs}
    with pytest.raises(ValueError, match=message):
        Panel(arguments.pop("judges"), **arguments)


_SCORE = {"bounded": st.one_of(st.none(), st.integers(0, 10), st.floats(0, 10, allow_nan=False)),
          "binary": st.one_of(st.none(), st.sampled_from([0, 1])),
          "choice": st.one_of(st.none(), st.sampled_from([1, 2, 3]))}
_MEMBER = st.one_of(st.fixed_dictionaries(_SCORE).map(lambda s: ("static", s)), st.just(("raise", None)))


@settings(max_examples=150, deadline=None)
@given(members=st.lists(_MEMBER, min_size=1, max_size=6), aggregate=st.sampled_from(["mean", "median", "majority"]),
       data=st.data())
def test_the_members_order_never_changes_the_verdict(members, aggregate, data):
    judges = [RaisingJudge(f"m{i}") if kind == "raise" else StaticJudge(f"m{i}", scores)
              for i, (kind, scores) in enumerate(members)]
    min_valid = data.draw(st.integers(1, len(judges)))
    permuted = data.draw(st.permutations(judges))
    first = judged(Panel(judges, aggregate=aggregate, min_valid=min_valid))[0]
    second = judged(Panel(permuted, aggregate=aggregate, min_valid=min_valid))[0]
    assert first.to_dict() == second.to_dict()
    for criterion in first.criteria:
        valid = [s for kind, s in members if kind == "static" and s[criterion.id] is not None]
        assert (criterion.score is None) == (len(valid) < min_valid)
        if criterion.score is not None:
            assert RUBRIC.criterion(criterion.id).scale.problem(criterion.score) is None
            assert min(map(float, (s[criterion.id] for s in valid))) <= criterion.score
            assert criterion.score <= max(map(float, (s[criterion.id] for s in valid)))


def test_llm_members_over_http_a_failing_endpoint_abstains_and_a_recovering_one_counts():
    """Real LLMJudges against scripted endpoints: one answers 500 past its retries, one a 429 (Retry-After) and a
    503 before answering, one answers at once."""
    config = RuntimeConfig(max_concurrency=4, retries=2, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=10)
    broken = Scripted([server_error(500)] * 3, then=lambda body: malformed())  # 3 attempts: retries=2
    recovering = Scripted([rate_limited(0.05), server_error(503)], then=Gullible(ARITH))
    with FakeJudgeServer(broken) as bad, FakeJudgeServer(recovering) as slow, FakeJudgeServer(Gullible(ARITH)) as ok:
        members = [LLMJudge(server.base_url, name, runtime=config, name=name)
                   for server, name in ((bad, "bad"), (slow, "slow"), (ok, "ok"))]
        try:
            verdict = asyncio.run(Panel(members, aggregate="median", min_valid=2).judge(
                [JudgeItem(level="outcome", rubric=ARITH, candidate=WRONG_ANSWER)]))[0]
        finally:
            for member in members:
                member.close()
        assert (bad.calls, slow.calls) == (3, 3)
    assert verdict.valid and verdict.scores() == {c.id: c.scale.min for c in ARITH.criteria}
    by_name = {m["judge"]: m for m in verdict.meta["members"]}
    assert by_name["bad"]["valid"] is False and by_name["bad"]["error_kind"] == "outage"
    assert by_name["slow"]["valid"] and by_name["ok"]["valid"]
    assert len(verdict.calls) == sum(len(m["calls"]) for m in verdict.meta["members"]) >= 6
