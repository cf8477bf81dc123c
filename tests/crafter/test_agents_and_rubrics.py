"""The baseline agents read the text view alone and are deterministic; the heuristic gets through the first rungs of
the tech tree; the policies wrap them; the rubric criteria score hand-made traces."""

from __future__ import annotations

import asyncio

import pytest

from proofgym.crafter import CRAFTER_RUBRICS, HeuristicAgent, RandomAgent, read_view
from proofgym.crafter._rubrics import achievement_depth, goal_completion, unique_achievements
from proofgym.envs import make
from proofgym.judges import CriterionContext
from proofgym.policies import PolicyRequest, build_policy, policy_names
from proofgym.traces import SessionTrace, StepTrace

TEXT = """Step 3 of 10000; turn 2 of 100.
Status: health 9/9, food 4/9, drink 7/9, energy 9/9.
Position: (31, 32). You face tree (west).
Inventory: wood 2, sapling 1.
Achievements unlocked (1/22): collect_wood.
You see:
- tree 1 step to your west (1 west)
- cow 3 steps to your north-east (2 north, 1 east)
Map (5x5, north up, @ is you):
...C.
.....
T.@..
.....
.....
"""


def test_the_view_is_read_from_the_text():
    view = read_view(TEXT)
    assert view.status == {"health": 9, "food": 4, "drink": 7, "energy": 9}
    assert view.inventory == {"wood": 2, "sapling": 1} and view.facing == "tree" and view.facing_dir == (-1, 0)
    assert view.seen == {"tree": (-1, 0), "cow": (1, -2)} and view.cell(-2, 0) == "T" and view.cell(0, 0) == "@"


def test_the_heuristic_goes_for_food_when_hungry_and_the_random_agent_is_deterministic():
    assert HeuristicAgent().decide(TEXT) == ["move_up"]  # towards the cow, the longer axis first
    draws = [RandomAgent().decide("", seed=3, turn=t) for t in range(1, 50)]
    assert draws == [RandomAgent().decide("", seed=3, turn=t) for t in range(1, 50)]
    assert len({d[0] for d in draws}) > 5


pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")


def test_the_heuristic_collects_wood_places_a_table_and_makes_a_pickaxe_from_text_alone():
    agent = HeuristicAgent()
    with make("crafter", max_turns=60) as env:
        observation = env.reset(0)
        for turn in range(1, 61):
            result = env.step({"tool": "interact_many", "args": {"actions": agent.decide(observation.text, turn=turn)}})
            observation = result.observation
            if result.done:
                break
        unlocked = set(observation.data["achievements_unlocked"])
    assert {"collect_wood", "place_table", "make_wood_pickaxe"} <= unlocked


def test_oracle_actions_replay_the_heuristic_episode_and_unlock_achievements():
    with make("crafter", max_turns=20) as env:
        actions = env.oracle_actions(1)
        env.reset(1)
        total = sum(env.step(action).reward for action in actions)
    assert 1 <= len(actions) <= 20 and total >= 1


def test_the_policies_are_registered_and_act_from_the_last_observation():
    assert {"crafter-random", "crafter-heuristic"} <= set(policy_names())
    policy = build_policy("crafter-heuristic", {})
    reply = asyncio.run(policy.act(PolicyRequest(messages=[{"role": "user", "content": TEXT}], turn=2, seed=0)))
    assert reply.action == {"tool": "interact", "args": {"action": "move_up"}}
    random_policy = build_policy("crafter-random", {"seed": 1})
    reply = asyncio.run(random_policy.act(PolicyRequest(messages=[], turn=1, seed=0)))
    assert reply.action["tool"] == "interact" and reply.error is None
    with pytest.raises(Exception, match="unknown_key"):
        build_policy("crafter-random", {"unknown_key": 1})


def trace(*infos):
    return SessionTrace(session_id="s", run_id="r", env_name="crafter",
                        steps=[StepTrace(index=i, info=info) for i, info in enumerate(infos)])


def context(session, name, step=None):
    level = "event" if step is not None else "outcome"
    rubric = CRAFTER_RUBRICS.event if step is not None else CRAFTER_RUBRICS.outcome
    criterion = next(c for c in rubric.criteria if c.id == name)
    return CriterionContext(trace=session, level=level, criterion=criterion, step_index=step)


def counts(*names):
    from proofgym.crafter import ACHIEVEMENTS

    return {name: int(name in names) for name in ACHIEVEMENTS}


def test_the_rubric_criteria_score_hand_made_traces():
    session = trace({"unlocked": ["collect_wood"], "achievements": counts("collect_wood")},
                    {"unlocked": [], "achievements": counts("collect_wood")},
                    {"unlocked": ["place_table", "make_wood_pickaxe"], "end_reason": "death",
                     "achievements": counts("collect_wood", "place_table", "make_wood_pickaxe")})
    assert unique_achievements(context(session, "unique_achievements", 0))[0] == 1.0
    assert unique_achievements(context(session, "unique_achievements", 1))[0] == 0.0
    assert achievement_depth(context(session, "achievement_depth"))[0] == pytest.approx(2 / 5)
    assert goal_completion(context(session, "goal_completion"))[0] == pytest.approx(0.5 * 0.3)  # died
    alive = trace({"end_reason": "step_limit", "achievements": counts("make_iron_pickaxe")})
    assert goal_completion(context(alive, "goal_completion"))[0] == 1.0
    assert achievement_depth(context(alive, "achievement_depth"))[0] == 1.0


def test_the_rubric_set_is_the_seeds_criteria():
    assert [(c.id, c.weight) for c in CRAFTER_RUBRICS.event.criteria] == [("unique_achievements", 0.9),
                                                                          ("intent_alignment", 0.1)]
    assert [(c.id, c.weight) for c in CRAFTER_RUBRICS.outcome.criteria] == [("goal_completion", 0.6),
                                                                            ("achievement_depth", 0.4)]
