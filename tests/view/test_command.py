"""``proofgym view`` as a command: its errors, the export, and a real server process with and without a key."""

from __future__ import annotations

import httpx
import pytest
from typer.testing import CliRunner

pytest.importorskip("jinja2", reason="the viewer needs jinja2: pip install -e '.[view]'")

from proofgym.cli import app  # noqa: E402
from proofgym.traces import TraceStore  # noqa: E402

from ._sessions import grant_session  # noqa: E402
from .conftest import start_viewer, stop_viewer  # noqa: E402


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "traces.db"
    with TraceStore(path) as store:
        store.start_run("run-a", kind="eval", env_name="grant_eligibility")
        store.write_sessions([grant_session(i) for i in range(3)])
    return path


def test_a_missing_store_is_one_error_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(app, ["view", "--traces", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and "cannot open the trace store" in result.output and "does not exist" in result.output
    assert not (tmp_path / "none.db").exists()


def test_export_needs_a_run_and_names_an_unknown_one(store_path, tmp_path):
    runner = CliRunner()
    alone = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out")])
    assert alone.exit_code == 2 and "--export DIR and --run ID go together" in alone.output
    unknown = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out"),
                                  "--run", "nope"])
    assert unknown.exit_code == 2 and "run 'nope' is not in" in unknown.output
    done = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out"),
                               "--run", "run-a"])
    assert done.exit_code == 0 and "wrote 3 sessions of run run-a" in done.output
    assert (tmp_path / "out" / "index.html").is_file()


def test_the_server_process_answers_with_its_key_only(store_path):
    viewer = start_viewer(["--traces", str(store_path)], env={"PROOFGYM_API_KEY": "k3y", "ENVIRONMENT_API_KEY": ""},
                          headers={"X-API-Key": "k3y"})
    try:
        assert httpx.get(viewer.url + "/").status_code == 401
        page = httpx.get(viewer.url + "/sessions/run-a-s0000", headers={"Authorization": "Bearer k3y"})
        assert page.status_code == 200 and "permit_eligible" in page.text
    finally:
        stop_viewer(viewer)
