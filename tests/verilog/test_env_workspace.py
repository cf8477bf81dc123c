"""Each episode gets a fresh private workspace; write_file is confined to it and bounded."""

import os

import pytest

from proofgym.verilog import VerilogEnv, VerilogEnvConfig, get_problem

from ._support import reference_design, requires_judge

pytestmark = requires_judge

PROBLEM = get_problem("Prob001_and_gate")


def write(path, content="module a; endmodule\n"):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def test_two_environments_with_the_same_seed_have_different_workspaces():
    with VerilogEnv([PROBLEM]) as first, VerilogEnv([PROBLEM]) as second:
        first.reset(7)
        second.reset(7)
        assert first.workspace != second.workspace
        first.step(write("top.v"))
        assert second.step({"tool": "compile"}).observation.data["compiled"] is False  # sees no design


def test_close_removes_the_workspace_and_reset_replaces_it():
    env = VerilogEnv([PROBLEM])
    env.reset(0)
    old = env.workspace
    env.step(write("top.v"))
    env.reset(0)
    assert not os.path.exists(old) and os.listdir(env.workspace) == []
    current = env.workspace
    env.close()
    assert not os.path.exists(current)


def test_an_environment_that_is_never_closed_still_removes_its_workspace():
    env = VerilogEnv([PROBLEM])
    env.reset(0)
    workspace = env.workspace
    del env
    assert not os.path.exists(workspace)


def test_the_file_count_is_capped_but_files_can_be_overwritten():
    with VerilogEnv([PROBLEM], config=VerilogEnvConfig(max_files=2)) as env:
        env.reset(0)
        env.step(write("a.v"))
        env.step(write("b.sv"))
        refused = env.step(write("c.v"))
        assert "maximum of 2 files" in refused.info["error"]
        assert env.step(write("a.v", "// again\n")).observation.data["files"] == ["a.v", "b.sv"]


def test_the_size_cap_counts_utf8_bytes():
    with VerilogEnv([PROBLEM], config=VerilogEnvConfig(max_file_bytes=10)) as env:
        env.reset(0)
        assert "error" not in env.step(write("a.v", "x" * 10)).info
        assert "11 bytes" in env.step(write("a.v", "é" * 5 + "x")).info["error"]


def test_write_file_does_not_follow_a_symlink_planted_in_the_workspace(tmp_path):
    outside = tmp_path / "outside.v"
    outside.write_text("untouched")
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        os.symlink(outside, os.path.join(env.workspace, "top.v"))
        result = env.step(write("top.v", "module evil; endmodule"))
        assert "error" in result.info
        assert env.step({"tool": "compile"}).info["revision"] == result.info["revision"]
    assert outside.read_text() == "untouched"


def test_the_design_is_every_file_in_name_order_and_errors_name_the_agents_file():
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        top = reference_design(PROBLEM).replace("assign out = a & b;", "assign out = a & b; helper h();")
        env.step(write("b_top.v", top))
        env.step(write("a_helper.v", "module helper;\n  wire w;\nendmodule"))  # no final newline: still joins
        assert env.step({"tool": "simulate"}).observation.data["passed"] is True
        env.step(write("a_helper.v", "module helper;\n\n  wire w = ;\nendmodule\n"))
        result = env.step({"tool": "compile"})
    assert "a_helper.v:3" in result.observation.text


@pytest.mark.parametrize("name", ["top.v", "top.sv", "My_Design-2.v", "a.b.v"])
def test_plain_verilog_file_names_are_accepted(name):
    with VerilogEnv([PROBLEM]) as env:
        env.reset(0)
        assert env.step(write(name)).observation.data["files"] == [name]
