import pytest

from proofgym.training import DemoSettings, CompactGRPOConfig, HeldoutReport
from proofgym.training._demo import goal_held_from, goal_met, may_stop
from proofgym.training._demo_task import BRANCH_LABELS


def _report(per_branch):
    n = sum(t for _, t in per_branch.values())
    return HeldoutReport(n=n, accuracy=sum(c for c, _ in per_branch.values()) / n, per_branch=per_branch)


def test_the_goal_needs_every_branch_at_97_percent():
    good = {branch: (97, 100) for branch in BRANCH_LABELS}
    assert goal_met(_report(good))
    assert not goal_met(_report({**good, "minor": (96, 100)}))
    missing = {b: v for b, v in good.items() if b != "active_grant"}
    assert not goal_met(_report(missing))  # a branch the held-out set lacks is not a pass


def test_a_policy_that_always_denies_does_not_pass():
    always_deny = {branch: ((0, 500) if branch == "permit" else (125, 125)) for branch in BRANCH_LABELS}
    report = _report(always_deny)
    assert report.accuracy == 0.5 and not goal_met(report)


def test_the_learning_rate_decays_over_the_runs_steps():
    settings = DemoSettings(steps=120)
    assert settings.grpo_schedule().decay_steps == 120
    assert DemoSettings(steps=120, lr_decay=False).grpo_schedule().decay_steps == 0
    assert DemoSettings(steps=5, grpo=CompactGRPOConfig(warmup_steps=10)).grpo_schedule().decay_steps == 0


def test_the_goal_holds_from_the_first_evaluation_after_which_it_never_failed():
    good = _report({branch: (100, 100) for branch in BRANCH_LABELS})
    bad = _report({**{branch: (100, 100) for branch in BRANCH_LABELS}, "permit": (90, 100)})
    assert goal_held_from([(25, bad), (50, good), (75, bad), (100, good), (125, good)]) == 100
    assert goal_held_from([(25, good), (50, good)]) == 25
    assert goal_held_from([(25, good), (50, bad)]) is None
    assert goal_held_from([]) is None


def test_a_run_stops_early_only_with_the_goal_held_twice_and_a_margin_above_it_at_the_last():
    top = _report({branch: (100, 100) for branch in BRANCH_LABELS})
    edge = _report({**{branch: (100, 100) for branch in BRANCH_LABELS}, "income_over_threshold": (132, 136)})
    clear = _report({**{branch: (100, 100) for branch in BRANCH_LABELS}, "income_over_threshold": (134, 136)})
    assert may_stop([(25, top), (50, top)]) and may_stop([(25, edge), (50, clear)])
    assert not may_stop([(25, top), (50, edge)])  # 97.1 %: at the goal, not above it by the margin
    assert not may_stop([(50, top)]) and not may_stop([])


@pytest.mark.parametrize("kwargs", [{"steps": 0}, {"heldout_rows": -1}, {"threads": 0}, {"curriculum_mix": 2.0},
                                    {"eval_every": True}, {"average_decay": 1.0}, {"average_decay": True},
                                    {"stop_at_goal": "yes"}])
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        DemoSettings(**kwargs)
