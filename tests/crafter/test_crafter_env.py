"""The crafter environment: registered by entry point, its tools and schemas, malformed calls, the text view,
episodes that end on death or a limit and say which, determinism, limits."""

from __future__ import annotations

import json

import pytest

from proofgym.core import ConfigError
from proofgym.crafter import ACHIEVEMENTS
from proofgym.envs import env_names, make

crafter = pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")


@pytest.fixture(scope="module")
def env():
    with make("crafter", max_turns=50) as built:
        built.reset(0)
        yield built


def many(*actions):
    return {"tool": "interact_many", "args": {"actions": list(actions)}}


def test_crafter_is_registered_through_the_entry_point():
    assert "crafter" in env_names()


def test_the_tools_are_interact_many_and_interact_with_full_json_schemas(env):
    tools = {tool["function"]["name"]: tool["function"]["parameters"] for tool in env.tools}
    assert set(tools) == {"interact_many", "interact"}
    actions = tools["interact_many"]["properties"]["actions"]
    assert actions["type"] == "array" and actions["maxItems"] == 8 and len(actions["items"]["enum"]) == 17
    assert tools["interact"]["required"] == ["action"] and tools["interact"]["additionalProperties"] is False
    json.dumps(env.tools)


def test_the_first_observation_carries_the_references_message_and_balrogs_description(env):
    observation = env.reset(0)
    text = observation.text
    for part in ("Step 0 of 10000", "Status: health 9/9, food 9/9, drink 9/9, energy 9/9", "Position: (32, 32)",
                 "You face", "Inventory: nothing.", "Achievements unlocked (0/22): none.", "You see:",
                 "Map (5x5, north up, @ is you):"):
        assert part in text
    # The rules and tools are the system message (kept for a model shown frames alone), not part of the view.
    assert "interact_many" in observation.data["system"] and "Map legend" in observation.data["system"]
    assert "interact_many" not in text
    assert "steps to your" in text  # "tree 7 steps to your north-west (3 north, 4 west)"
    rows = text.split("Map (5x5, north up, @ is you):\n")[1].splitlines()[:5]
    assert [len(row) for row in rows] == [5] * 5 and rows[2][2] == "@"


@pytest.mark.parametrize("action, fragment", [
    ("not json", "not valid JSON"),
    ({"tool": "jump", "args": {}}, "unknown tool"),
    (many(*["noop"] * 9), "more than the limit of 8"),
    ({"tool": "interact_many", "args": {"actions": "move_left"}}, "must be a list"),
    ({"tool": "interact_many", "args": {"actions": [1, 2]}}, "must be a list of action names"),
    ({"tool": "interact_many", "args": {}}, "missing required argument 'actions'"),
    ({"tool": "interact_many", "args": {"actions": [], "extra": 1}}, "unexpected argument"),
    ({"tool": "interact", "args": {"action": "fly"}}, "unknown action 'fly'"),
    ({"tool": "interact", "args": {"action": 5}}, "must be a string"),
])
def test_a_malformed_call_is_an_error_observation_that_runs_nothing(env, action, fragment):
    env.reset(0)
    result = env.step(action)
    assert fragment in result.info["error"] and result.observation.text.startswith("Error:")
    assert result.info["actions_run"] == [] and result.reward == 0.0 and not result.done
    assert "Status:" in result.observation.text  # the view follows a refused call
    # ... and its info carries the state as every step's does (an evaluation reads the last step's achievements)
    assert set(result.info["achievements"]) == set(ACHIEVEMENTS) and result.info["world_step"] == 0
    assert {"inventory", "position", "unlocked", "skipped"} <= set(result.info)


def test_a_reply_with_no_tool_call_as_the_last_step_still_gives_the_achievement_table():
    from proofgym.evaluation._report import achievements_of  # what the eval's achievement table reads

    with make("crafter", max_turns=2) as env:
        env.reset(0)
        env.step({"tool": "interact", "args": {"action": "noop"}})
        last = env.step(None)  # the rollout loop's step for a reply it could not read as a tool call
    assert last.done and last.info["end_reason"] == "turn_limit"
    assert achievements_of(dict(last.info)) == {name: 0 for name in ACHIEVEMENTS}


def test_unknown_names_are_skipped_and_an_empty_call_is_a_noop(env):
    env.reset(0)
    result = env.step(many("move_left", "dance", "move_left"))
    assert result.info["actions_run"] == ["move_left", "move_left"] and result.info["skipped"] == ["dance"]
    assert "skipped unknown actions: dance" in result.observation.text
    assert result.info["position"] == [30, 32]
    empty = env.step(many())
    assert empty.info["actions_run"] == ["noop"] and empty.info["world_step"] == 3


def test_interact_runs_one_action_and_the_last_three_calls_are_shown(env):
    env.reset(0)
    for _ in range(4):
        result = env.step({"tool": "interact", "args": {"action": "move_up"}})
    assert result.info["world_step"] == 4
    assert result.observation.text.count("interact [move_up]") == 3


PLAN = [["move_left", "do", "move_up"], ["do", "do"], ["sleep"] * 8, ["move_down"] * 8, ["noop"] * 8] * 8


def crafters_own_episode(seed, plan):
    """Positions, achievements and creatures of crafter's own rendered Env(seed) playing ``plan``, its chunks' creatures
    kept in insertion order: crafter keeps them in sets ordered by memory address, so which one it despawns (and
    all that follows) may differ between two runs of crafter itself."""
    from proofgym.crafter._world import _ordered_world

    reference = crafter.Env(seed=seed)
    reference._world.__class__ = _ordered_world(crafter.engine.World)
    reference.reset()
    out = []
    for actions in plan:
        for name in actions:
            _, _, done, info = reference.step(crafter.constants.actions.index(name))
            if done:
                break
        out.append((info["player_pos"].tolist(), info["achievements"],
                    sorted((type(o).__name__.lower(), o.pos.tolist()) for o in reference._world.objects)))
        if done:
            break
    return out


def our_episode(env, seed, plan):
    env.reset(seed)
    out = []
    for actions in plan:
        result = env.step(many(*actions))
        out.append((result.info["position"], result.info["achievements"],
                    sorted((type(o).__name__.lower(), o.pos.tolist()) for o in env._world._env._world.objects)))
        if result.done:
            break
    return out


@pytest.mark.parametrize("frames", [False, True])
def test_an_episode_is_crafters_own_episode_of_the_seed_with_or_without_frames(frames):
    # The plan sleeps into the night, where crafter's renderer draws from the world's generator.
    from proofgym.crafter._world import WORLDS

    WORLDS.clear()
    expected = crafters_own_episode(7, PLAN)
    with make("crafter", frames={"store": frames}) as env:
        fresh = our_episode(env, 7, PLAN)
        cached = our_episode(env, 7, PLAN)  # the same world from the process's cache
    assert fresh == expected and cached == expected
    with make("crafter", frames={"store": not frames}) as other:
        assert our_episode(other, 7, PLAN) == fresh


def test_the_same_seed_gives_the_same_observations_and_another_seed_another_world():
    with make("crafter") as first, make("crafter") as second:
        a, b = first.reset(7), second.reset(7)
        assert a.text == b.text
        plan = [many("move_left", "do", "move_up"), many("do", "do"), {"tool": "interact", "args": {"action": "do"}}]
        assert [first.step(p).to_dict() for p in plan] == [second.step(p).to_dict() for p in plan]
        assert first.reset(8).text != a.text


def test_the_step_limit_truncates_and_says_so():
    with make("crafter", env_params={"max_steps_per_episode": 5}) as env:
        env.reset(0)
        first = env.step(many("noop", "noop", "noop"))
        assert not first.done
        last = env.step(many("noop", "noop", "noop", "noop"))
        assert last.done and last.truncated and last.info["end_reason"] == "step_limit"
        assert last.info["actions_run"] == ["noop", "noop"] and last.info["world_step"] == 5
        assert "step limit" in last.observation.text and last.info["progress"] == 0.0


def test_the_turn_limit_truncates_and_says_so():
    with make("crafter", max_turns=2) as env:
        env.reset(0)
        env.step(many("noop"))
        last = env.step("garbage")  # a refused call still counts, and may be the last
        assert last.done and last.truncated and last.info["end_reason"] == "turn_limit"


def test_death_ends_the_episode_not_truncated():
    with make("crafter") as env:
        env.reset(0)
        env._world.player.health = 0  # as a zombie would leave it
        result = env.step(many("noop"))
        assert result.done and not result.truncated and result.info["end_reason"] == "death"
        assert "You died" in result.observation.text


def test_every_step_reports_all_22_achievement_counts_for_the_eval(env):
    env.reset(0)
    info = env.step(many("noop")).info
    assert len(info["achievements"]) == 22 and set(info["achievements"].values()) == {0}


def test_frames_are_opt_in_and_bounded():
    with make("crafter") as env:
        assert "image_png_base64" not in env.reset(0).data
    with make("crafter", frames={"store": True, "max_frames": 2}) as env:
        frames = [env.reset(0).data.get("image_png_base64")]
        frames += [env.step(many("noop")).observation.data.get("image_png_base64") for _ in range(3)]
        assert sum(frame is not None for frame in frames) == 2
    with make("crafter", use_vision=True) as env:
        import base64

        assert base64.b64decode(env.reset(0).data["image_png_base64"]).startswith(b"\x89PNG")


@pytest.mark.parametrize("config, key", [({"max_turns": 0}, "max_turns"), ({"max_turns": True}, "max_turns"),
                                         ({"difficulty": "brutal"}, "difficulty"), ({"reward": 1}, "reward"),
                                         ({"env_params": {"max_steps": 3}}, "max_steps"),
                                         ({"max_actions_per_call": 9}, "max_actions_per_call"),
                                         ({"event_rewards_kind": "all"}, "event_rewards_kind")])
def test_invalid_configs_are_refused_naming_the_key(config, key):
    with pytest.raises((ValueError, ConfigError)) as caught:
        make("crafter", **config)
    assert key in str(caught.value)


def test_a_step_after_the_end_or_before_reset_is_a_bug_of_the_caller():
    with make("crafter", max_turns=1) as env:
        with pytest.raises(RuntimeError):
            env.step(many("noop"))
        env.reset(0)
        env.step(many("noop"))
        with pytest.raises(RuntimeError):
            env.step(many("noop"))
