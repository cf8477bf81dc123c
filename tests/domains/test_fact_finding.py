"""The fact_finding environment's format warm-up episodes."""

from __future__ import annotations

from proofgym.domains._fact_finding import make_fact_finding_env


def test_warmup_episodes_ask_the_first_facts_in_the_domains_order_and_decide_at_random():
    import random

    env = make_fact_finding_env()
    rng = random.Random(0)
    names = list(env.domain.spec.facts)
    decisions, lengths = set(), set()
    for seed in range(200):
        actions = env.warmup_actions(seed, rng)
        asked = [a["args"]["name"] for a in actions[:-1]]
        assert all(a["tool"] == "get_fact" for a in actions[:-1]) and actions[-1]["tool"] == "answer"
        assert asked == names[:len(asked)]  # a prefix: how many is random, never read from the facts
        decisions.add(actions[-1]["args"]["decision"])
        lengths.add(len(asked))
    assert decisions == set(env.domain.spec.decisions) and lengths == set(range(len(names) + 1))


def _play(env, seed, names, decision):
    env.reset(seed)
    for name in names:
        env.step({"tool": "get_fact", "args": {"name": name}})
    return env.step({"tool": "answer", "args": {"decision": decision}})


def _records(env, gold, failing=None):
    from proofgym.domains import gold_decision
    from proofgym.domains._fact_finding import deciding_facts

    for seed in range(256):
        facts = env.record_for(seed).facts
        if gold_decision(env.domain, facts) == gold and \
                (failing is None or deciding_facts(env.domain, facts) == {failing}):
            yield seed


def test_an_answer_pays_only_when_the_revealed_facts_prove_it():
    env = make_fact_finding_env()
    names = list(env.domain.spec.facts)
    minor = next(_records(env, "deny", "age"))
    others = [n for n in names if n != "age"]
    blind = _play(env, minor, others, "deny")  # right, but nothing revealed says so
    assert blind.reward == 0.0 and blind.info["correct"] is True and blind.info["certified"] is False
    assert blind.passed is False and blind.outcome_score == 0.0  # a lucky guess is not a success
    assert blind.observation.text == "correct, but not shown by the facts revealed"
    shown = _play(env, minor, ["age"], "deny")
    assert shown.reward == 1.0 and shown.info["certified"] is True and shown.outcome_score == 1.0
    permit = next(_records(env, "permit"))
    assert _play(env, permit, names[:-1], "permit").reward == 0.0  # one requirement never checked
    assert _play(env, permit, names, "permit").reward == 1.0
    assert _play(env, permit, names, "deny").info["correct"] is False


def test_the_outcome_criterion_gives_nothing_for_a_lucky_guess():
    from proofgym.domains._fact_finding import correct_decision

    env = make_fact_finding_env()
    minor = next(_records(env, "deny", "age"))

    class Step:
        def __init__(self, info):
            self.info = info
            self.env_event = type("Event", (), {"tool": "answer"})()

    class Context:
        def __init__(self, info):
            self.trace = type("Trace", (), {"steps": [Step(info)]})()

    lucky = _play(env, minor, [], "deny").info
    proven = _play(env, minor, ["age"], "deny").info
    assert correct_decision(Context(lucky)) == (0.0, "right by luck: the facts revealed do not decide the record")
    assert correct_decision(Context(proven)) == (1.0, "certified and correct")


class _Step:
    def __init__(self, result):
        self.info = result.info
        self.index = result.info.get("index", 0)
        self.env_event = type("Event", (), {"tool": result.info["tool"]})()


class _Context:
    def __init__(self, results, at=None):
        self.trace = type("Trace", (), {"steps": [_Step(r) for r in results]})()
        self.step = self.trace.steps[at] if at is not None else None


def _episode(env, seed, names, decision):
    env.reset(seed)
    results = [env.step({"tool": "get_fact", "args": {"name": name}}) for name in names]
    return results + [env.step({"tool": "answer", "args": {"decision": decision}})]


def test_verdicts_say_whether_each_revealed_fact_meets_its_requirement():
    env = make_fact_finding_env(verdicts=True)
    minor = next(_records(env, "deny", "age"))
    texts = [r.observation.text for r in _episode(env, minor, list(env.domain.spec.facts), "deny")[:-1]]
    facts = env.record_for(minor).facts
    assert texts[0] == f"age = {facts['age']} (fails: under 18)"
    assert texts[1] == f"annual_income = {facts['annual_income']} (meets: at most 30000)"
    assert texts[2:] == ["resident = true (meets: a resident)", "has_active_grant = false (meets: no active grant)"]
    plain = make_fact_finding_env()
    plain.reset(minor)
    assert plain.step({"tool": "get_fact", "args": {"name": "age"}}).observation.text == f"age = {facts['age']}"


def test_a_tally_counts_the_facts_checked_and_failed_so_far():
    env = make_fact_finding_env(verdicts=True, tally=True)
    minor = next(_records(env, "deny", "age"))
    texts = [r.observation.text for r in _episode(env, minor, ["annual_income", "age", "age"], "deny")[:-1]]
    assert [t.split("; ")[1] for t in texts] == ["1 of 4 checked, 0 failed", "2 of 4 checked, 1 failed",
                                                 "2 of 4 checked, 1 failed"]
    permit = next(_records(env, "permit"))
    last = _episode(env, permit, list(env.domain.spec.facts), "permit")[-2].observation.text
    assert last.endswith("(meets: no active grant); 4 of 4 checked, 0 failed")


def test_verdicts_and_tally_are_refused_where_they_cannot_be_computed():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="verdicts: true needs a domain whose per-fact requirements"):
        make_fact_finding_env(verdicts=True, domain="loan")
    with pytest.raises(ValidationError, match="tally: true needs verdicts: true"):
        make_fact_finding_env(tally=True)


def test_a_call_made_once_the_record_is_decided_is_redundant_and_earns_no_credit():
    from proofgym.domains._fact_finding import concise, no_redundancy, relevant_reveal

    env = make_fact_finding_env()
    names = list(env.domain.spec.facts)
    minor = next(_records(env, "deny", "age"))
    late = _episode(env, minor, names[:2], "deny")  # income asked after age already decided the denial
    assert [r.info["decided"] for r in late[:2]] == [False, True]
    assert relevant_reveal(_Context(late, 0)) == (1.0, "a deciding fact")
    assert relevant_reveal(_Context(late, 1)) == (0.0, "the facts already revealed decided the record")
    assert no_redundancy(_Context(late, 1)) == (0.0, "asked after the record was decided")
    assert concise(_Context(late))[0] == 0.0
    prompt = _episode(env, minor, names[:1], "deny")
    assert no_redundancy(_Context(prompt, 0)) == (1.0, "not redundant") and concise(_Context(prompt)) == (
        1.0, "certified, nothing wasted")
    permit = next(_records(env, "permit"))
    full = _episode(env, permit, names, "permit")
    assert not any(r.info["decided"] for r in full[:-1]) and concise(_Context(full))[0] == 1.0
    assert concise(_Context(_episode(env, permit, names, "deny"))) == (0.0, "wrong (gold permit)")
    again = _episode(env, permit, names + ["age"], "permit")
    assert again[-2].info["repeated"] and concise(_Context(again))[0] == 0.0
