import json

import pytest
from _judge import requires_judge
from taskapp._support import only_environment_api_key
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.evaluation import EvalError, parse_eval_config, run_eval
from proofgym.traces import TraceStore

from ._support import ThreadedTaskApp, write_eval_toml

runner = CliRunner()
KEY = "eval-key"


@pytest.fixture(scope="module")
def task_app(tmp_path_factory):
    traces = tmp_path_factory.mktemp("app") / "app.db"
    with ThreadedTaskApp("verilog", api_key=KEY, store=traces, env_config={"problem_id": "Prob001_and_gate"}) as served:
        served.traces = traces
        yield served


@pytest.fixture(scope="module")
def judgeless_task_app(tmp_path_factory):
    """A task app whose judge cannot run: its iverilog is not there."""
    traces = tmp_path_factory.mktemp("judgeless") / "app.db"
    env_config = {"problem_id": "Prob001_and_gate", "judge": {"iverilog": "/nonexistent/iverilog"}}
    with ThreadedTaskApp("verilog", api_key=KEY, store=traces, env_config=env_config) as served:
        yield served


@pytest.fixture(autouse=True)
def key(monkeypatch):
    only_environment_api_key(monkeypatch, KEY)


def config(task_app, tmp_path, **keys):
    return parse_eval_config({"evaluation": {"task_app_url": task_app.url, "policy_name": "oracle", "seeds": "0-3",
                                       "traces": str(tmp_path / "local.db"), **keys}}).evaluation


@requires_judge
def test_the_rollouts_run_on_the_task_app_and_their_traces_are_stored_here(task_app, tmp_path):
    report = run_eval(config(task_app, tmp_path, concurrency=2))
    assert report.env_name == "verilog" and report.task_app_url == task_app.url
    assert [r.seed for r in report.results] == [0, 1, 2, 3]
    assert all(r.ok and r.passed and r.task_id == "Prob001_and_gate" for r in report.results)
    with TraceStore(tmp_path / "local.db", create=False) as local:
        assert {s.session_id for s in local.list_sessions(run_id=report.run_id)} == \
            {r.session_id for r in report.results}
        assert local.list_runs()[0].summary["pass_rate"] == 1.0
    with TraceStore(task_app.traces, create=False) as remote:  # the app keeps its own copy, under the eval's run
        assert remote.count_sessions(run_id=report.run_id) == 4


def test_max_turns_is_sent_to_the_task_app(task_app, tmp_path):
    actions = [{"tool": "compile", "args": {}}] * 5
    report = run_eval(config(task_app, tmp_path, policy_name="scripted", max_turns=2, seeds=[0],
                             policy_config={"actions": actions}))
    [result] = report.results
    assert result.ok and result.num_steps == 2 and result.outcome_score == 0.0


def test_a_compact_trace_still_counts_tokens_but_is_not_stored(task_app, tmp_path):
    report = run_eval(config(task_app, tmp_path, trace_format="compact", seeds=[0]))
    assert report.results[0].tokens == 0
    with TraceStore(tmp_path / "local.db", create=False) as local:
        assert local.count_sessions() == 0 and local.list_runs()[0].n_sessions == 0


def test_requests_the_task_app_refuses_are_failed_results(task_app, tmp_path):
    report = run_eval(config(task_app, tmp_path, seeds=[0], env_config={"max_turns": 3}))
    [result] = report.results
    assert result.status == "failed" and "HTTP 422" in result.error and "max_turns" in result.error


def test_a_wrong_key_stops_the_eval_before_any_rollout(task_app, tmp_path, monkeypatch):
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "wrong")
    with pytest.raises(EvalError, match="refused the API key"):
        run_eval(config(task_app, tmp_path))
    monkeypatch.setenv("MY_KEY", KEY)
    assert run_eval(config(task_app, tmp_path, api_key_env="MY_KEY", seeds=[0])).failed == 0


def test_an_env_name_the_app_does_not_serve_stops_the_eval(task_app, tmp_path):
    with pytest.raises(EvalError, match="serves 'verilog'"):
        run_eval(config(task_app, tmp_path, env_name="loan"))


def test_an_unreachable_task_app_exits_2(tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"task_app_url": "http://127.0.0.1:9", "policy_name": "oracle",
                                                 "seeds": [0], "traces": str(tmp_path / "t.db")})
    result = runner.invoke(app, ["eval", "--config", str(path)])
    assert result.exit_code == 2 and "cannot reach the task app" in " ".join(result.output.split())


@requires_judge
def test_the_command_against_a_task_app(task_app, tmp_path):
    path = write_eval_toml(tmp_path / "e.toml", {"task_app_url": task_app.url, "policy_name": "oracle",
                                                 "seeds": "0-1", "traces": str(tmp_path / "t.db")})
    result = runner.invoke(app, ["eval", "--config", str(path), "--json-out", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    assert f"task app {task_app.url}" in result.output
    assert json.loads((tmp_path / "s.json").read_text())["mode"] == "remote"


@pytest.mark.parametrize("trace_format", ["full", "compact"])
def test_rollouts_the_task_app_cannot_judge_come_back_invalid_with_the_reason(judgeless_task_app, tmp_path,
                                                                              trace_format):
    path = write_eval_toml(tmp_path / "e.toml", {"task_app_url": judgeless_task_app.url, "policy_name": "oracle",
                                                 "seeds": "0-1", "trace_format": trace_format,
                                                 "traces": str(tmp_path / "t.db")})
    result = runner.invoke(app, ["eval", "--config", str(path), "--json-out", str(tmp_path / "s.json")])
    assert result.exit_code == 1, result.output
    assert result.output.count("outcome invalid (iverilog not installed) ") == 2
    summary = json.loads((tmp_path / "s.json").read_text())["summary"]
    assert (summary["ok"], summary["failed"], summary["invalid"], summary["pass_rate"]) == (2, 0, 2, None)


def test_a_task_app_url_with_credentials_is_never_recorded(task_app, tmp_path, monkeypatch):
    url = task_app.url.replace("http://", "http://user:hunter2@")
    report = run_eval(config(task_app, tmp_path, seeds=[0], task_app_url=url))
    assert report.task_app_url == task_app.url.replace("http://", "http://***@")
    assert "hunter2" not in json.dumps(report.to_dict())
    with TraceStore(tmp_path / "local.db", create=False) as local:
        [run] = local.list_runs()
    assert run.config["task_app_url"] == report.task_app_url and "hunter2" not in json.dumps(run.config)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "wrong")
    with pytest.raises(EvalError) as info:
        run_eval(config(task_app, tmp_path, task_app_url=url))
    assert "refused the API key" in str(info.value) and "hunter2" not in str(info.value)


def test_a_full_trace_with_its_session_trace_is_stored_here_as_proofgyms_session(task_app, tmp_path):
    actions = [{"tool": "compile", "args": {}}] * 2
    report = run_eval(config(task_app, tmp_path, policy_name="scripted", max_turns=2, seeds=[0],
                             policy_config={"actions": actions}))
    [result] = report.results
    assert result.ok and result.session_id
    with TraceStore(tmp_path / "local.db", create=False) as local:
        session = local.get_session(result.session_id)
    assert len(session.steps) == 2 and "session_trace" not in session.metadata


def test_a_full_trace_is_read_with_or_without_the_v3_session_trace():
    from proofgym.evaluation._remote import _read_response
    from proofgym.traces import SessionTrace, StepTrace

    session = SessionTrace(session_id="s1", run_id="r", env_name="loan", seed=0, policy_id="p", started_at=1.0,
                           steps=[StepTrace(index=0, observation={"text": "hi"}, action="a", reward=1.0, done=True)])
    metrics = {"mean_return": 1.0, "num_steps": 1}
    older = session.to_dict()  # an older app's full trace: the session alone
    newer = {**older, "session_trace": {"session_id": "s1", "session_time_steps": []}}
    for trace in (older, newer):
        result, read = _read_response({"metrics": metrics, "trace": trace}, 0, 0.1)
        assert read.to_dict() == older and result.ok
    with pytest.raises((ValueError, KeyError, TypeError)):  # any other unknown key is still refused
        _read_response({"metrics": metrics, "trace": {**older, "other": 1}}, 0, 0.1)


def test_an_eval_sharing_its_task_apps_trace_store_stores_each_session_once(tmp_path):
    """`proofgym serve` and `proofgym eval` run from one directory both write traces/proofgym.db: the app stores
    each session under the eval's run, and the eval's own write of it is not a failure."""
    shared = tmp_path / "proofgym.db"
    with ThreadedTaskApp("grant_eligibility", api_key=KEY, store=shared) as served:
        report = run_eval(parse_eval_config({"evaluation": {"task_app_url": served.url, "policy_name": "oracle",
                                                      "seeds": "0-2", "traces": str(shared)}}).evaluation)
    assert [r.status for r in report.results] == ["ok"] * 3, [r.error for r in report.results]
    assert all(r.passed for r in report.results)
    with TraceStore(shared, create=False) as store:
        assert store.count_sessions(run_id=report.run_id) == 3
        assert store.list_runs()[0].summary["pass_rate"] == 1.0
