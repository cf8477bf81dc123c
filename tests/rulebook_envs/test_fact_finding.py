"""The fact_finding environment's format warm-up episodes."""

from __future__ import annotations

from proofgym.rulebook_envs._fact_finding import make_fact_finding_env


def test_warmup_episodes_ask_facts_in_the_domains_order_and_decide_at_random():
    import random

    env = make_fact_finding_env()
    rng = random.Random(0)
    names = list(env.domain.spec.facts)
    decisions, lengths = set(), set()
    for seed in range(200):
        actions = env.warmup_actions(seed, rng)
        asked = [a["args"]["name"] for a in actions[:-1]]
        assert all(a["tool"] == "get_fact" for a in actions[:-1]) and actions[-1]["tool"] == "answer"
        assert asked == sorted(asked, key=names.index) and len(set(asked)) == len(asked)
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
    from proofgym.rulebook_envs._fact_finding import deciding_facts

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
    assert blind.observation.text == "correct, but not shown by the facts revealed"
    shown = _play(env, minor, ["age"], "deny")
    assert shown.reward == 1.0 and shown.info["certified"] is True
    permit = next(_records(env, "permit"))
    assert _play(env, permit, names[:-1], "permit").reward == 0.0  # one requirement never checked
    assert _play(env, permit, names, "permit").reward == 1.0
    assert _play(env, permit, names, "deny").info["correct"] is False


def test_the_outcome_criterion_gives_nothing_for_a_lucky_guess():
    from proofgym.rulebook_envs._fact_finding import correct_decision

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
