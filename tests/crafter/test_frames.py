"""Frames stored with a rollout's trace (opt-in, bounded) and written as a GIF or a PNG strip by the CLI."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.crafter import session_frames, write_frames
from proofgym.policies import build_policy
from proofgym.rollouts import run_rollout
from proofgym.traces import TraceStore

pytest.importorskip("crafter", reason="needs the crafter package: pip install 'proofgym[crafter]'")
MOVES = [{"tool": "interact_many", "args": {"actions": ["move_left", "do"]}}] * 6


def rollout(frames):
    policy = build_policy("scripted", {"actions": MOVES})
    return asyncio.run(run_rollout("crafter", seed=0, policy=policy, env_config={"max_turns": 6, "frames": frames}))


def test_a_rollout_stores_at_most_max_frames_and_the_cli_writes_them(tmp_path):
    session = rollout({"store": True, "max_frames": 4}).session
    assert len(session_frames(session)) == 4  # the first observation's and three steps'
    with TraceStore(tmp_path / "t.db") as store:
        store.start_run("adhoc", kind="eval")
        store.write_session(session)
    for name, magic in (("run.gif", b"GIF8"), ("run.png", b"\x89PNG")):
        result = CliRunner().invoke(app, ["crafter", "frames", session.session_id, "--traces",
                                          str(tmp_path / "t.db"), "--out", str(tmp_path / name), "--scale", "2"])
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).read_bytes().startswith(magic)
    from PIL import Image

    assert Image.open(tmp_path / "run.png").size == (4 * 128, 128)


def test_the_stored_trace_keeps_each_frame_once_and_the_viewer_shows_each_step_its_result(tmp_path):
    import json

    from proofgym.view._evidence import frames

    session = rollout({"store": True}).session
    with TraceStore(tmp_path / "t.db") as store:
        store.start_run("adhoc", kind="eval")
        store.write_session(session)
        [stored] = [store.get_session(session.session_id)]
    steps = stored.steps
    assert len(steps) == 6 and len(session_frames(stored)) == 7  # the first observation's and six results'
    text = json.dumps([[s.observation, s.env_event.result] for s in steps])
    assert text.count("iVBORw0KGgo") == 7  # once each: a later observation is the previous step's result
    for index, step in enumerate(steps[1:], 1):
        assert "image_png_base64" not in step.observation["data"]
        assert step.observation["data"]["image_png_base64_at"] == f"steps[{index - 1}].env_event.result"
    shown = [frames(step) for step in steps]
    assert [len(uris) for uris in shown] == [2, 1, 1, 1, 1, 1]
    assert all(uri.startswith("data:image/png;base64,iVBORw0KGgo") for uris in shown for uri in uris)


def test_without_frames_nothing_is_stored_and_the_cli_says_how_to_record_them(tmp_path):
    session = rollout({"store": False}).session
    assert session_frames(session) == []
    with TraceStore(tmp_path / "t.db") as store:
        store.start_run("adhoc", kind="eval")
        store.write_session(session)
    result = CliRunner().invoke(app, ["crafter", "frames", session.session_id, "--traces", str(tmp_path / "t.db"),
                                      "--out", str(tmp_path / "x.gif")])
    assert result.exit_code != 0 and "frames.store" in result.output
    with pytest.raises(ValueError, match="no frames"):
        write_frames([], tmp_path / "y.png")


def test_a_frame_that_is_not_a_png_is_skipped():
    session = rollout({"store": True, "max_frames": 2}).session
    session.steps[0].observation["data"]["image_png_base64"] = "bm90IGEgcG5n"  # "not a png"
    assert len(session_frames(session)) == 1
