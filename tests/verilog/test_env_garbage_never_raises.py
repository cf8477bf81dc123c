"""An agent that sends garbage never makes the environment raise; it gets errors until the turn limit."""

import json

import pytest

from proofgym.verilog import VerilogEnv, VerilogEnvConfig, get_problem

from ._support import requires_judge

pytestmark = requires_judge

GARBAGE = [
    "not json at all",
    '{"tool": "write_file", "args": {"path": "top.v"',
    json.dumps([1, 2, 3]),
    None,
    42,
    3.5,
    ["write_file"],
    {"tool": "rm -rf /", "args": {}},
    {"tool": "write_file", "args": {"path": "../../etc/passwd", "content": "root::0:0::/:/bin/sh"}},
    {"tool": "write_file", "args": {"path": "/abs/top.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "/etc/passwd", "content": "x"}},
    {"tool": "write_file", "args": {"path": "sub/top.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "..\\top.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "top.v/..", "content": "x"}},
    {"tool": "write_file", "args": {"path": ".hidden.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "notes.txt", "content": "x"}},
    {"tool": "write_file", "args": {"path": "top.v", "content": "x" * ((64 << 10) + 1)}},
    {"tool": "write_file", "args": {"path": "top.v", "content": "é" * (40 << 10)}},  # over the byte cap
    {"tool": "write_file", "args": {"path": "top\ud800.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "top\x00.v", "content": "x"}},
    {"tool": "write_file", "args": {"path": "x" * 500 + ".v", "content": "x"}},
    {"tool": "write_file", "args": {"path": 7, "content": "x"}},
    {"tool": "write_file", "args": {"path": "top.v", "content": ["module"]}},
    {"tool": "write_file", "args": {"path": "top.v"}},
    {"tool": "write_file", "args": {"path": "top.v", "content": "x", "mode": "0777"}},
    {"tool": "compile", "args": {"sources": ["/etc/passwd"]}},
    {"tool": "simulate", "args": {"binary": "/tmp/evil.vvp"}},
    {"tool": "submit", "args": "please"},
    {"name": "compile", "arguments": "{not json"},
    {"function": {"name": "write_file", "arguments": json.dumps({"path": "../x.v", "content": "x"})}},
]


@pytest.mark.parametrize("action", GARBAGE, ids=range(len(GARBAGE)))
def test_each_garbage_action_is_an_error_observation(action):
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate", step_penalty=0.001)) as env:
        env.reset(0)
        result = env.step(action)
        assert result.info["error"] and result.observation.text.startswith("Error: ")
        assert result.reward == pytest.approx(-0.001) and not result.done
        assert result.observation.data.get("files", []) == []  # nothing was written
        json.dumps(result.to_dict())


def test_a_garbage_agent_runs_until_the_turn_limit():
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate", max_turns=len(GARBAGE))) as env:
        env.reset(3)
        results = [env.step(action) for action in GARBAGE]
    assert all("error" in r.info for r in results)
    assert [r.done for r in results] == [False] * (len(GARBAGE) - 1) + [True]
    assert results[-1].truncated and sum(r.reward for r in results) == 0.0


def test_content_with_lone_surrogates_or_nul_is_written_under_the_one_rule():
    """Model text with a lone surrogate or NUL is stored as proofgym stores all model text (U+FFFD in their
    place, proofgym.core.model_text): written, shown and judged like that, never an exception."""
    with VerilogEnv(config=VerilogEnvConfig(problem_id="Prob001_and_gate")) as env:
        env.reset(0)
        result = env.step({"tool": "write_file", "args": {"path": "top.v", "content": "// \ud800 \x00\n"}})
        assert "error" not in result.info and result.observation.data["files"] == ["top.v"]
        compiled = env.step({"tool": "compile", "args": {}})
        json.dumps(compiled.to_dict(), ensure_ascii=False).encode("utf-8")


def test_path_escapes_write_nothing_outside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "escaped.v"
    with VerilogEnv([get_problem("Prob001_and_gate")]) as env:
        env.reset(0)
        for path in ["../escaped.v", "../../escaped.v", str(target), f"..{'/..' * 20}{target}"]:
            env.step({"tool": "write_file", "args": {"path": path, "content": "module x; endmodule"}})
    assert list(tmp_path.iterdir()) == []
