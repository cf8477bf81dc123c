"""The eval summary's achievement hook: an environment whose last step's ``info["achievements"]`` counts its
achievements gets each one's success rate, the score (Crafter's formula) and progress in the summary."""

from __future__ import annotations

import math

import pytest

from proofgym.evaluation import EvalReport, SeedResult
from proofgym.evaluation._report import achievement_summary, achievements_of


def result(seed, status="ok", **counts):
    names = {"a": 0, "b": 0, "c": 0, "d": 0}
    return SeedResult(seed, status, total_return=1.0, achievements={**names, **counts})


def test_success_rates_score_and_progress_by_hand():
    results = [result(0, a=1, b=3), result(1, a=2), result(2), result(3, a=1, c=1)]
    found = achievement_summary(results)
    assert found["success_rates"] == {"a": 75.0, "b": 25.0, "c": 25.0, "d": 0.0}
    expected = math.exp((math.log(76) + math.log(26) + math.log(26) + math.log(1)) / 4) - 1
    assert found["score"] == pytest.approx(expected)
    assert found["progress"] == pytest.approx((2 / 4 + 1 / 4 + 0 + 2 / 4) / 4)
    assert found["episodes"] == 4 and found["achievements"] == 4


def test_the_score_is_crafters_published_formula():
    # Every achievement at p % gives exactly p: exp(mean(ln(1 + p))) - 1.
    results = [result(i, a=1, b=1, c=1, d=1) for i in range(3)] + [result(3)]
    assert achievement_summary(results)["score"] == pytest.approx(75.0)


def test_failed_and_invalid_rollouts_do_not_count_and_no_achievements_means_none():
    results = [result(0, a=1), result(1, "failed"), SeedResult(2, "ok", achievements={"a": 1, "b": 0},
                                                                 invalid_reason="toolchain missing")]
    assert achievement_summary(results)["episodes"] == 1
    assert achievement_summary([SeedResult(0, "ok", total_return=1.0)]) is None
    report = EvalReport("r", "env", "p", None, None, None, results=[SeedResult(0, "ok", total_return=1.0)])
    assert report.summary()["achievements"] is None


@pytest.mark.parametrize("info", [None, {}, {"achievements": []}, {"achievements": {"a": -1}},
                                  {"achievements": {"a": True}}, {"achievements": {"a": 1.5}}, "text"])
def test_an_info_without_counts_in_that_shape_reports_none(info):
    assert achievements_of(info) is None


def test_the_report_summary_carries_the_achievements():
    report = EvalReport("r", "env", "p", None, None, None, results=[result(0, a=1), result(1)])
    assert report.summary()["achievements"]["success_rates"]["a"] == 50.0
    assert report.to_dict()["results"][0]["achievements"]["a"] == 1
