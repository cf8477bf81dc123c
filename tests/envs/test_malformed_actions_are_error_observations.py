import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgym.envs._tools import MAX_ACTION_CHARS
from ._support import CounterEnv

MALFORMED = {
    "not json": "{tool: add",
    "json array": "[1, 2]",
    "json number": "42",
    "null": None,
    "integer": 7,
    "list": [{"tool": "add", "args": {"n": 1}}],
    "no tool named": {"args": {"n": 1}},
    "unknown tool": {"tool": "rm", "args": {}},
    "tool name not a string": {"tool": ["add"], "args": {"n": 1}},
    "missing argument": {"tool": "add", "args": {}},
    "extra argument": {"tool": "add", "args": {"n": 1, "m": 2}},
    "string for integer": {"tool": "add", "args": {"n": "1"}},
    "boolean for integer": {"tool": "add", "args": {"n": True}},
    "float for integer": {"tool": "add", "args": {"n": 1.0}},
    "integer for string": {"tool": "echo", "args": {"text": 5}},
    "string for boolean": {"tool": "echo", "args": {"text": "a", "loud": "yes"}},
    "over maxLength": {"tool": "echo", "args": {"text": "x" * 11}},
    "args not an object": {"tool": "add", "args": [1]},
    "arguments bad json": {"name": "add", "arguments": "{n: 1}"},
    "arguments json array": {"name": "add", "arguments": "[1]"},
    "unexpected envelope key": {"tool": "add", "args": {"n": 1}, "sudo": True},
    "ambiguous envelope": {"tool": "add", "name": "finish", "args": {"n": 1}},
    "function not an object": {"function": "add"},
    "duplicate key": '{"tool": "add", "tool": "finish", "args": {"n": 1}}',
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "huge integer": '{"tool": "add", "args": {"n": ' + "9" * 5000 + "}}",
    "oversized": json.dumps({"tool": "echo", "args": {"text": "x" * MAX_ACTION_CHARS}}),
    "invalid utf-8": b"\xff\xfe",
    "non-string key": {1: "add"},
}


@pytest.mark.parametrize("action", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_action_is_an_error_observation_and_the_episode_goes_on(action):
    with CounterEnv(step_penalty=0.01) as env:
        env.reset(1)
        result = env.step(action)
        assert isinstance(result.info["error"], str) and result.info["error"]
        assert result.observation.text.startswith("Error: ")
        assert len(result.observation.text) < 500  # the agent's (possibly huge) input is not echoed back
        assert result.reward == pytest.approx(-0.01) and not result.done
        assert env.step({"tool": "add", "args": {"n": 1}}).observation.data == {"counter": 1}


def test_the_error_names_what_was_wrong():
    with CounterEnv() as env:
        env.reset(0)
        assert "unknown tool 'rm'" in env.step({"tool": "rm"}).info["error"]
        error = env.step({"tool": "add", "args": {"n": "1", "m": 2}}).info["error"]
        assert "'n' must be an integer" in error and "unexpected argument 'm'" in error


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
envelopes = st.fixed_dictionaries(
    {},
    optional={"tool": st.sampled_from(["add", "echo", "finish", "nope"]) | json_values,
              "name": json_values, "args": json_values, "arguments": json_values | json_values.map(json.dumps),
              "function": json_values},
)


@settings(max_examples=300, deadline=None)
@given(action=json_values | envelopes | envelopes.map(json.dumps) | st.text(max_size=50) | st.binary(max_size=30))
def test_nothing_an_agent_sends_raises(action):
    with CounterEnv(max_turns=3) as env:
        env.reset(2)
        result = env.step(action)
    json.dumps(result.to_dict())  # JSON-native
    assert result.reward == sum(result.info["reward_components"].values())
