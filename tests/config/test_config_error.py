import pickle

import pytest

from proofgym.config import ConfigError
from proofgym.envs import make


def test_a_config_error_has_no_problems_unless_given():
    error = ConfigError("run.yaml: verifier: required key missing")
    assert str(error) == "run.yaml: verifier: required key missing" and error.problems == ()


def test_a_config_error_keeps_its_problems_with_tuple_locs():
    error = ConfigError("bad", problems=[{"loc": ["a", 0], "msg": "m", "input": 3, "type": "t"}])
    assert str(error) == "bad"
    assert error.problems == ({"loc": ("a", 0), "msg": "m", "input": 3, "type": "t"},)
    assert pickle.loads(pickle.dumps(error)).problems == error.problems


def test_a_rulebook_env_config_error_lists_each_key_at_fault():
    with pytest.raises(ConfigError) as info:
        make("grant_eligibility", max_turns=-1, bogus=1)
    message = str(info.value)
    assert message.startswith("environment 'grant_eligibility': invalid config: max_turns: ")
    assert "bogus: unknown key" in message
    assert [(p["loc"], p["type"], p["input"]) for p in info.value.problems] == [
        (("max_turns",), "greater_than_equal", -1), (("bogus",), "extra_forbidden", 1)]
    assert all(p["msg"] and set(p) == {"loc", "msg", "input", "type"} for p in info.value.problems)
