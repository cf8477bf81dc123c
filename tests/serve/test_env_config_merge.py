import pytest

from proofgym.serve import create_app
from proofgym.serve._envs import merge_env_config, same_json
from proofgym.serve._errors import RequestError


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
