"""``proofgym view`` as a command: its errors, the export, and a real server process with and without a key."""

from __future__ import annotations

import httpx
import pytest
from typer.testing import CliRunner

pytest.importorskip("jinja2", reason="the viewer needs jinja2: pip install -e '.[view]'")

from proofgym.cli import app  # noqa: E402

from ._real import eval_run, session_ids  # noqa: E402
from .conftest import start_viewer, stop_viewer  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding one real eval of three grant_eligibility sessions: (path, run id)."""
    path = tmp_path_factory.mktemp("command") / "traces.db"
    return path, eval_run(path, "grant_eligibility", seeds=[0, 1, 2], policy="oracle")


def test_a_missing_store_is_one_error_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(app, ["view", "--traces", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert "cannot open the trace store" in result.output and "does not exist" in result.output
    assert not (tmp_path / "none.db").exists()


def test_export_needs_a_run_and_names_an_unknown_one(store, tmp_path):
    store_path, run_id = store
    runner = CliRunner()
    alone = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out")])
    assert alone.exit_code == 2 and "--export DIR and --run ID go together" in alone.output
    unknown = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out"),
                                  "--run", "nope"])
    assert unknown.exit_code == 2 and "run 'nope' is not in" in unknown.output
    done = runner.invoke(app, ["view", "--traces", str(store_path), "--export", str(tmp_path / "out"),
                               "--run", run_id])
    assert done.exit_code == 0 and f"wrote 3 sessions of run {run_id}" in done.output
    assert (tmp_path / "out" / "index.html").is_file()


def test_the_server_process_answers_with_its_key_only(store):
    store_path, run_id = store
    first = session_ids(store_path, run_id)[0]
    viewer = start_viewer(["--traces", str(store_path)], env={"PROOFGYM_API_KEY": "k3y", "ENVIRONMENT_API_KEY": ""},
                          headers={"X-API-Key": "k3y"})
    try:
        assert httpx.get(viewer.url + "/").status_code == 401
        page = httpx.get(viewer.url + f"/sessions/{first}", headers={"Authorization": "Bearer k3y"})
        assert page.status_code == 200 and "proof independently checked" in page.text
    finally:
        stop_viewer(viewer)


def test_the_server_process_answers_a_nul_id_with_a_400_and_logs_no_traceback(store):
    store_path, _ = store
    viewer = start_viewer(["--traces", str(store_path)])
    try:
        for url in ("/sessions/%00", "/groups/%00", "/compare?a=%00", "/sessions?cid=%00", "/runs/%00"):
            assert httpx.get(viewer.url + url).status_code in (400, 404), url
    finally:
        stop_viewer(viewer)
    log = viewer.process.stdout.read() if viewer.process.stdout else ""
    assert "Traceback" not in log and "Exception" not in log, log[-2000:]
