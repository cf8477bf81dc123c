import json

import pytest

from proofgym.envs import ToolCall
from ._support import CounterEnv

FORMS = [
    {"tool": "add", "args": {"n": 2}},
    {"name": "add", "arguments": {"n": 2}},
    {"name": "add", "arguments": '{"n": 2}'},
    {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"n": 2}'}},
    {"function": {"name": "add", "arguments": {"n": 2}}},
    ToolCall("add", {"n": 2}),
]


@pytest.mark.parametrize("action", FORMS + [json.dumps(f) for f in FORMS if isinstance(f, dict)])
def test_each_accepted_form_is_the_same_call(action):
    with CounterEnv() as env:
        env.reset(3)
        result = env.step(action)
    assert "error" not in result.info
    assert result.observation.data == {"counter": 2}


@pytest.mark.parametrize("action", [{"tool": "finish"}, {"tool": "finish", "args": {}},
                                    {"name": "finish", "arguments": ""},
                                    {"function": {"name": "finish", "arguments": "{}"}}, b'{"tool": "finish"}'])
def test_a_tool_without_parameters_takes_absent_or_empty_arguments(action):
    with CounterEnv() as env:
        env.reset(0)
        result = env.step(action)
    assert "error" not in result.info and result.done and result.reward == 1.0


def test_optional_arguments_may_be_given():
    with CounterEnv() as env:
        env.reset(0)
        assert env.step({"tool": "echo", "args": {"text": "hi", "loud": True}}).observation.text == "HI"


def test_tools_are_listed_in_the_openai_format():
    env = CounterEnv()
    add = next(t for t in env.tools if t["function"]["name"] == "add")
    assert add == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add n to the counter.",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                           "additionalProperties": False},
        },
    }
    add["function"]["parameters"]["properties"].clear()  # a caller's copy; the tool is unchanged
    assert env.tools[0]["function"]["parameters"]["properties"] == {"n": {"type": "integer"}}
