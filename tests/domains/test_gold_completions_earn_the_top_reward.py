"""For every shipped domain: its gold completions earn the top reward through the real reward path, and
known-wrong, ungrounded (changed or invented fact) and hedged completions do not."""

import json

import pytest

from proofgym.domains import Record, build_dataset, gold_completion
from proofgym.rewards import DefaultRewardShaper, RewardFunction, ShaperConfig
from proofgym.rules import load_rulebook
from proofgym.runtime import RuntimeConfig, VerificationRuntime
from proofgym.domains import RulebookVerifier

SHAPERS = {"verifier": ShaperConfig(), "rule_mentions": ShaperConfig(graded_from="rule_mentions")}


@pytest.fixture(params=sorted(SHAPERS))
def reward_fn(request, domain):
    runtime = VerificationRuntime(RulebookVerifier(domain.rulebook_path), RuntimeConfig())
    shaper = DefaultRewardShaper(SHAPERS[request.param])
    with RewardFunction(domain.spec.parser(require_facts=True), runtime, shaper) as fn:
        yield fn


def _rows(domain, chat=False):
    # Two rows of every branch, so every rule path is scored.
    return build_dataset(domain, seed=5, n=2 * len(domain.branches) * len(domain.spec.decisions), chat=chat)


def _answer(domain, decision, facts, reasoning="I checked each rule against the record."):
    spec = domain.spec
    body = json.dumps({spec.answer_key: decision, spec.facts_key: facts})
    return f"<{spec.reasoning_tag}>{reasoning}</{spec.reasoning_tag}>\n<{spec.tag}>{body}</{spec.tag}>"


def _changed(domain, name, value):
    """Another value of the fact's type that the rulebook's gate accepts."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return next(v for v in load_rulebook(domain.rulebook_path).fact(name).values if v != value)
    return value + 1 if value < 100 else value - 1


def _score(fn, rows, completions):
    return fn.score([row["prompt"] for row in rows], completions, rows)


def _record(row):
    return Record(id=row["id"], facts=row["source_facts"], branch=row["branch"])


@pytest.mark.parametrize("chat", [False, True], ids=["plain", "chat"])
def test_gold_completion_earns_the_top_reward(domain, reward_fn, chat):
    rows = _rows(domain, chat)
    items = _score(reward_fn, rows, [gold_completion(domain, _record(row)) for row in rows])
    shaper = reward_fn.shaper
    ceiling = shaper.bounds[1]
    for row, item in zip(rows, items):
        assert item.outcome == "certified", item.reason
        assert item.components["correct"] == item.components["certified"] == item.components["grounded"] == 1.0
        assert item.components["rejected"] == 0.0
        # The only credit a gold answer may miss is graded credit its verifier never gives.
        if shaper.config.graded_from == "rule_mentions":
            assert item.reward == pytest.approx(ceiling), (row["branch"], item.reason)
        else:
            missed = shaper.config.weights.graded * (1 - item.components["graded"])
            assert item.reward == pytest.approx(ceiling - missed)


def test_wrong_ungrounded_invented_missing_and_hedged_answers_score_below_gold(domain, reward_fn):
    rows = _rows(domain)
    gold = _score(reward_fn, rows, [gold_completion(domain, _record(row)) for row in rows])
    for row, best in zip(rows, gold):
        facts = row["source_facts"]
        wrong = [d for d in domain.spec.decisions if d != row["gold"]]
        name = sorted(facts)[len(row["id"]) % len(facts)]  # a different fact from row to row
        missing = {k: v for k, v in facts.items() if k != name}
        bad = {
            **{f"wrong:{d}": _answer(domain, d, facts) for d in wrong},
            "changed_fact": _answer(domain, row["gold"], {**facts, name: _changed(domain, name, facts[name])}),
            "invented_fact": _answer(domain, row["gold"], {**facts, "nickname": "Sam"}),
            "missing_fact": _answer(domain, row["gold"], missing),
            "hedged": _answer(domain, row["gold"], facts) + "\n" + _answer(domain, wrong[0], facts),
            "hedged_same": _answer(domain, row["gold"], facts) * 2,
        }
        scored = dict(zip(bad, _score(reward_fn, [row] * len(bad), list(bad.values()))))
        for label, item in scored.items():
            assert item.reward < best.reward, (label, row["branch"], item.reason)
        for d in wrong:
            assert scored[f"wrong:{d}"].components["correct"] == 0.0
        for label in ("changed_fact", "invented_fact", "missing_fact"):
            assert scored[label].components["grounded"] == 0.0, label
            assert scored[label].components["certified"] == 0.0, label
        assert scored["hedged"].outcome == scored["hedged_same"].outcome == "format_error"
        assert scored["hedged"].reward == reward_fn.shaper.bounds[0]
