"""Difficulty by world traits: the reference's thresholds, traits computed once and cached on disk, seeds of a
level in order."""

from __future__ import annotations

import os

import pytest

from proofgym.crafter import TraitCache, difficulty_of


@pytest.mark.parametrize("trees, hostiles, level", [(4, 0, "easy"), (9, 0, "easy"), (3, 0, "medium"),
                                                    (4, 1, "medium"), (2, 2, "medium"), (1, 0, "hard"),
                                                    (5, 3, "hard"), (0, 5, "hard"), (9, 6, None)])
def test_the_references_thresholds(trees, hostiles, level):
    assert difficulty_of(trees, hostiles) == level


def fake_traits(seed):
    return {"trees": seed % 6, "hostiles": 0 if seed % 3 else 1}


def test_traits_are_measured_once_kept_on_disk_and_seeds_of_a_level_come_in_order(tmp_path):
    measured = []
    path = tmp_path / "traits.json"

    def measure(seed):
        measured.append(seed)
        return fake_traits(seed)

    cache = TraitCache(measure, path)
    easy = [cache.seed_at("easy", i) for i in range(3)]
    assert easy == [4, 5, 10] and all(difficulty_of(**fake_traits(s)) == "easy" for s in easy)
    assert measured == list(range(11))
    again = TraitCache(lambda seed: pytest.fail("measured again"), path)
    assert again.seed_at("easy", 2) == 10 and again.traits(3) == fake_traits(3)


def test_a_cache_file_that_is_not_private_or_not_json_is_ignored(tmp_path):
    path = tmp_path / "traits.json"
    path.write_text("{not json")
    assert TraitCache(fake_traits, path).traits(1) == fake_traits(1)
    path.write_text('{"1": {"trees": 99, "hostiles": 0}}')
    os.chmod(path, 0o666)
    assert TraitCache(fake_traits, path).traits(1) == fake_traits(1)


def test_a_level_with_too_few_worlds_is_an_error_naming_difficulty(tmp_path):
    cache = TraitCache(lambda seed: {"trees": 0, "hostiles": 9}, tmp_path / "t.json")
    with pytest.raises(ValueError, match="difficulty"):
        cache.seed_at("easy", 0, limit=5)


def test_an_environment_with_a_difficulty_plays_worlds_of_that_level(tmp_path, monkeypatch):
    pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")
    import proofgym.crafter._env as env_module
    from proofgym.crafter import CrafterWorld
    from proofgym.envs import make

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(env_module, "_TRAITS", None)
    with make("crafter", difficulty="easy") as env:
        first = env.reset(0).data
    world = CrafterWorld(max_steps=1, frames=False)
    world.reset(first["world_seed"])
    assert difficulty_of(**world.traits()) == "easy" and first["difficulty"] == "easy"
    assert (tmp_path / "proofgym" / "crafter" / "traits-1.8.3.json").is_file()
