"""``proofgym serve ./my_domain`` serves a domain folder's single-answer environment under the domain's name, and
``proofgym eval`` against it runs: the oracle passes every seed, the scripted always-one-answer policy does not."""

import json

import pytest
from _byod import byod_domain, forget_domain
from evaluation._support import ThreadedTaskApp, write_eval_toml
from taskapp._support import only_environment_api_key
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.cli._serve import domain_folder_env

runner = CliRunner()
KEY = "byod-key"


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = byod_domain(tmp_path_factory.mktemp("byod"))
    yield folder
    forget_domain()


@pytest.fixture(autouse=True)
def key(monkeypatch):
    only_environment_api_key(monkeypatch, KEY)


@pytest.fixture(scope="module")
def task_app(housing, tmp_path_factory):
    name = domain_folder_env(str(housing), workers=1)  # what `proofgym serve <folder>` serves
    assert name == "housing"
    with ThreadedTaskApp(name, api_key=KEY, store=tmp_path_factory.mktemp("app") / "app.db") as served:
        yield served


def eval_file(tmp_path, task_app, policy, env_config=None):
    return write_eval_toml(tmp_path / "eval.toml", {"kind": "eval", "task_app_url": task_app.url, "env_name": "housing",
                                                     "policy_name": policy, "seeds": "0-11",
                                                     "traces": str(tmp_path / "local.db")}, env_config)


def test_the_oracle_passes_every_seed_through_proofgym_eval(task_app, tmp_path):
    result = runner.invoke(app, ["eval", "--config", str(eval_file(tmp_path, task_app, "oracle")),
                                 "--json-out", str(tmp_path / "out.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out.json").read_text())
    results = report["results"]
    assert len(results) == 12 and all(r["passed"] for r in results)


def test_the_apps_info_names_the_domain(task_app):
    import httpx

    info = httpx.get(f"{task_app.url}/info", headers={"X-API-Key": KEY}).json()
    assert info["env_name"] == "housing"


def test_a_folder_is_served_by_one_worker_and_a_bad_folder_is_one_line(housing, tmp_path):
    result = runner.invoke(app, ["serve", str(housing), "--workers", "2", "--traces", str(tmp_path / "t.db")])
    assert result.exit_code == 2 and "--workers: a domain folder" in " ".join(result.output.split())
    result = runner.invoke(app, ["serve", str(tmp_path / "nowhere"), "--traces", str(tmp_path / "t.db")])
    assert result.exit_code == 2
    assert "no such domain folder" in " ".join(result.output.split())
    assert not (tmp_path / "t.db").exists()


def test_the_test_split_is_the_folders_held_out_split(task_app, tmp_path):
    from proofgym.domains import get_domain

    config = eval_file(tmp_path, task_app, "oracle", {"split": "test"})
    result = runner.invoke(app, ["eval", "--config", str(config), "--json-out", str(tmp_path / "out.json")])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out.json").read_text())["results"]
    heldout = [record.id for record in get_domain("housing").split_records("heldout")]
    assert [r["task_id"] for r in results] == heldout[:12] and all(r["passed"] for r in results)
