import pytest

from proofgym.taskapp import create_app
from proofgym.taskapp._envs import merge_env_config, same_json
from proofgym.taskapp._errors import RequestError


def test_only_allowed_keys_change():
    assert merge_env_config({"a": 1}, {"b": 2}, ["b"]) == {"a": 1, "b": 2}
    assert merge_env_config({"a": 1}, {"a": 3}, ["*"]) == {"a": 3}
    assert merge_env_config({"a": {"x": 1}}, {"a": {"x": 1}}) == {"a": {"x": 1}}
    with pytest.raises(RequestError) as exc_info:
        merge_env_config({"a": {"x": 1}}, {"a": {"x": 2}}, ["b"])
    assert exc_info.value.loc == ("env", "config", "a") and "keys a request may set: b" in exc_info.value.message


def test_a_repeated_key_must_be_the_same_json_value():
    # The published schema says "const": JSON's equality, where true is not 1 but 1.0 is 1.
    assert merge_env_config({"a": 5, "b": [1, {"c": None}]}, {"a": 5.0, "b": [1.0, {"c": None}]}) == \
        {"a": 5.0, "b": [1.0, {"c": None}]}
    for base, sent in [(True, 1), (0, False), (None, 0), ("1", 1), ([1], [1, 1]), ({"x": 1}, {"x": 1, "y": 2})]:
        assert not same_json(base, sent)
        with pytest.raises(RequestError):
            merge_env_config({"a": base}, {"a": sent})


def test_an_invalid_app_config_is_refused_when_the_app_is_built(tmp_path):
    with pytest.raises(ValueError, match="max_turns"):
        create_app("verilog", env_config={"max_turns": 0}, store=tmp_path / "t.db")
    with pytest.raises(ValueError, match="problem_id"):
        create_app("verilog", env_config={"problem_id": "Prob999_nope"}, store=tmp_path / "t.db")
    with pytest.raises(ValueError, match="unknown environment"):
        create_app("chess", store=tmp_path / "t.db")
    with pytest.raises(ValueError, match="unknown policy"):
        create_app("loan", policies=["gpt"], store=tmp_path / "t.db")


def test_problems_become_one_422_entry_each_under_the_prefix():
    error = RequestError.from_problems(("env", "config"), [
        {"loc": ("max_turns",), "msg": "too small", "input": -1, "type": "greater_than_equal"},
        {"loc": ("judge", "timeout_s"), "msg": "negative", "input": -2}])
    assert error.loc == ("env", "config", "max_turns") and error.message == "too small" and error.value == -1
    assert error.details() == [
        {"type": "greater_than_equal", "loc": ["body", "env", "config", "max_turns"], "msg": "too small", "input": -1},
        {"type": "value_error", "loc": ["body", "env", "config", "judge", "timeout_s"], "msg": "negative",
         "input": -2}]
    empty = RequestError.from_problems(("env", "config"), [], "no details")
    assert empty.details() == [{"type": "value_error", "loc": ["body", "env", "config"], "msg": "no details",
                                "input": None}]


def test_requests_may_set_the_reference_clients_keys_unless_forbidden(tmp_path):
    from proofgym.taskapp._envs import EnvProvider

    envs = EnvProvider("verilog", {"max_turns": 5})
    assert envs.overridable == {"difficulty", "split", "index"}
    config = envs.config_for({"split": "train", "index": 2, "difficulty": "medium"})
    assert config == {"max_turns": 5, "split": "train", "index": 2, "difficulty": "medium"}
    with pytest.raises(RequestError) as info:
        envs.config_for({"max_turns": 6})
    assert info.value.loc == ("env", "config", "max_turns")

    strict = EnvProvider("verilog", {"split": "test"}, overridable=["!split", "!difficulty"])
    assert strict.overridable == {"index"} and strict.forbidden == {"split", "difficulty"}
    assert strict.config_for({"split": "test", "index": 0})["split"] == "test"  # the app's own value
    for key, value in (("split", "train"), ("difficulty", "easy")):
        with pytest.raises(RequestError, match="forbids requests to set") as info:
            strict.config_for({key: value})
        assert info.value.loc == ("env", "config", key)

    assert EnvProvider("loan").overridable == {"split", "index"}  # it has no difficulty
    assert envs.difficulties == ("easy", "medium", "hard")
    pinned = EnvProvider("verilog", {"problem_id": "Prob001_and_gate"})  # an easy problem: only easy is accepted
    assert pinned.difficulties == ("easy",) and "difficulty" in pinned.overridable
    assert strict.difficulties == ()
    everything = EnvProvider("verilog", overridable=["*", "!index"])
    assert everything.config_for({"max_turns": 4})["max_turns"] == 4
    with pytest.raises(RequestError, match="forbids"):
        everything.config_for({"split": "test", "index": 1})
    with pytest.raises(ValueError, match="both allowed and forbidden"):
        EnvProvider("verilog", overridable=["split", "!split"])


def test_index_and_seed_must_name_the_same_position_and_each_index_builds_no_environment(monkeypatch):
    from proofgym.taskapp._envs import EnvProvider

    envs = EnvProvider("grant_eligibility")
    assert envs.config_for({"split": "test", "index": 3}, seed=3)["index"] == 3
    built = []
    monkeypatch.setattr(envs, "make", lambda config: built.append(config))
    for index in range(20):  # one validated config for every index: the cache holds it without the index
        assert envs.known_config({"split": "test", "index": index}, seed=index)["index"] == index
    assert built == []
    for call in (envs.known_config, envs.config_for):
        with pytest.raises(RequestError, match=r"index \(3\) and the seed \(0\)") as info:
            call({"split": "test", "index": 3}, seed=0)
        assert info.value.loc == ("env", "config", "index")
    for bad, key in (({"split": "dev"}, "split"), ({"index": 1}, "index"), ({"split": "val", "index": -1}, "index")):
        with pytest.raises(RequestError) as info:
            envs.config_for(bad)
        assert info.value.loc == ("env", "config", key)


def test_the_serve_command_turns_forbidden_keys_into_the_apps_list():
    from proofgym.cli._serve import env_override_list
    from proofgym.config import ConfigError

    assert env_override_list(["seed_offset"], ["split", "index"]) == ("seed_offset", "!split", "!index")
    for allow, forbid, message in ((["split"], ["split"], "also given"), ([], ["*"], "not an environment config"),
                                   ([], ["!x"], "not an environment config"), ([" "], [], "not an environment")):
        with pytest.raises(ConfigError, match=message):
            env_override_list(allow, forbid)
