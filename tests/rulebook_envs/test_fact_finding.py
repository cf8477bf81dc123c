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
