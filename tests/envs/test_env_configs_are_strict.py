"""Environment configs are validated strictly: a boolean is not a number (``--env-config '{"max_turns": true}'``
was one turn), nested sections included."""

import pytest
from pydantic import ValidationError

from proofgym.config import ConfigError
from proofgym.envs import make


@pytest.mark.parametrize("config, key", [
    ({"max_turns": True}, "max_turns"), ({"seed_offset": False}, "seed_offset"), ({"chat": 1}, "chat"),
    ({"max_turns": 2.0}, "max_turns"),
])
def test_a_rulebook_env_refuses_loose_types_by_key(config, key):
    with pytest.raises(ConfigError) as info:
        make("grant_eligibility", **config)
    assert [problem["loc"] for problem in info.value.problems] == [(key,)]


@pytest.mark.parametrize("config, loc", [
    ({"max_turns": True}, ("max_turns",)),
    ({"step_penalty": True}, ("step_penalty",)),
    ({"rewards": {"submit": True}}, ("rewards", "submit")),
    ({"judge": {"cpu_s": True}}, ("judge", "cpu_s")),
])
def test_the_verilog_env_refuses_loose_types_in_every_section(config, loc):
    with pytest.raises(ValidationError) as info:
        make("verilog", **config)
    assert [error["loc"] for error in info.value.errors()] == [loc]


def test_numbers_of_the_right_type_still_build():
    with make("grant_eligibility", max_turns=2, seed_offset=5, chat=False) as env:
        assert env.config.max_turns == 2
