import json

import pytest

torch = pytest.importorskip("torch")

import proofgym.training._generate as generation  # noqa: E402
from proofgym.training import HeldoutReport, demo_completion, demo_rows, demo_run_config, evaluate_heldout  # noqa: E402


@pytest.fixture
def reward_fn():
    fn = demo_run_config().reward_function()
    yield fn
    fn.close()


def _scripted(monkeypatch, answer):
    """Replace generation by ``answer(prompt) -> completion`` (the evaluator's counting is under test)."""

    def fake_generate(model, tokenizer, prompts, **kwargs):
        assert kwargs["greedy"] is True
        return generation.Generation(None, None, None, None, [answer(p) for p in prompts], [False] * len(prompts))

    monkeypatch.setattr(generation, "generate", fake_generate)


def test_accuracy_certified_and_format_shares_are_counted_per_branch(monkeypatch, reward_fn):
    rows = demo_rows(5, 40)
    by_prompt = {row["prompt"]: row for row in rows}

    def answer(prompt):
        row = by_prompt[prompt]
        if row["branch"] == "minor":  # wrong decision, faithful facts: certified for the other decision
            return demo_completion("permit", row["source_facts"])
        if row["branch"] == "non_resident":  # right decision, a mis-copied fact: correct, not certified
            return demo_completion(row["gold"], {**row["source_facts"], "age": row["source_facts"]["age"] + 1})
        if row["branch"] == "active_grant":  # no decision block at all
            return "deny"
        return demo_completion(row["gold"], row["source_facts"])

    _scripted(monkeypatch, answer)
    report = evaluate_heldout(None, None, rows, reward_fn, batch_size=7)
    branches = {b: sum(r["branch"] == b for r in rows) for b in {r["branch"] for r in rows}}
    assert report.n == 40 and sum(n for _, n in report.per_branch.values()) == 40
    assert report.per_branch["minor"] == (0, branches["minor"])
    assert report.per_branch["non_resident"] == (branches["non_resident"], branches["non_resident"])
    assert report.per_branch["active_grant"] == (0, branches["active_grant"])
    assert report.per_branch["permit"] == (branches["permit"], branches["permit"])
    wrong = branches["minor"] + branches["active_grant"]
    assert report.accuracy == pytest.approx((40 - wrong) / 40)
    certified = branches["permit"] + branches["income_over_threshold"]
    assert report.certified_share == pytest.approx(certified / 40)
    assert report.format_ok_share == pytest.approx((40 - branches["active_grant"]) / 40)
    assert report.mean_reward is not None and -1.0 < report.mean_reward < 1.9


def test_rows_without_a_branch_are_reported_under_all(monkeypatch, reward_fn):
    rows = [{k: v for k, v in row.items() if k != "branch"} for row in demo_rows(6, 5)]
    _scripted(monkeypatch, lambda prompt: "no answer")
    report = evaluate_heldout(None, None, rows, reward_fn)
    assert report.per_branch == {"all": (0, 5)} and report.format_ok_share == 0.0
    assert report.mean_reward == -1.0  # every format failure scores the floor


def test_report_round_trips_through_json():
    report = HeldoutReport(n=3, accuracy=2 / 3, per_branch={"minor": (1, 2), "permit": (1, 1)}, certified_share=0.5,
                           format_ok_share=1.0, mean_reward=None)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["per_branch"] == {"minor": [1, 2], "permit": [1, 1]} and data["mean_reward"] is None
    assert report.branch_accuracy() == {"minor": 0.5, "permit": 1.0}


def test_an_untrained_model_is_evaluated_end_to_end(small_model, reward_fn):
    model, tokenizer = small_model
    rows = demo_rows(7, 6)
    report = evaluate_heldout(model, tokenizer, rows, reward_fn, batch_size=4, max_new_tokens=8)
    assert report.n == 6 and 0.0 <= report.accuracy <= 1.0
    assert sum(n for _, n in report.per_branch.values()) == 6


@pytest.mark.parametrize("rows, message", [
    ([], "at least one row"),
    ([{"gold": "deny"}], "row 0 has no 'prompt'"),
    ([{"prompt": "x", "gold": ""}], "row 0 needs a non-blank string 'gold'"),
    ([{"prompt": "x", "gold": "deny"}, "row"], "row 1 must be a mapping"),
])
def test_malformed_rows_are_named(rows, message, reward_fn):
    with pytest.raises(ValueError, match=message):
        evaluate_heldout(None, None, rows, reward_fn)
