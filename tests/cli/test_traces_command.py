import json

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.traces import (
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    TraceStore,
    VerificationEvent,
)

runner = CliRunner()


def session(i: int, run_id: str = "run-1", env_name: str = "loan") -> SessionTrace:
    steps = [StepTrace(index=k, action={"answer": f"a{i}.{k}"}, reward=0.5 * k, done=k == 1,
                       lm_calls=[LMCallEvent(model="tiny-lm", request={"prompt": f"q{i}"}, response=f"a{i}.{k}",
                                             prompt_tokens=11, completion_tokens=7, latency_s=0.25)],
                       env_event=EnvEvent(tool="submit", result={"ok": True}, reward=0.5 * k, done=k == 1),
                       verification=VerificationEvent("rulebook", "certified" if i % 2 else "refuted") if k else None,
                       event_rewards=[EventReward(0.25, kind="shaped", key="format")]) for k in range(2)]
    return SessionTrace(session_id=f"s{i}", run_id=run_id, env_name=env_name, seed=i, correlation_id=f"cid-{i // 2}",
                        started_at=1_700_000_000.0 + i, status="ok" if i != 3 else "error",
                        error=None if i != 3 else "[boom] tool crashed", steps=steps,
                        outcome_reward=OutcomeReward(total=float(i), steps=2, score=float(i % 2)))


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "traces.db"
    with TraceStore(path) as store:
        store.start_run("run-1", kind="eval")
        store.start_run("run-2", kind="train")
        store.write_sessions([session(i) for i in range(4)] + [session(4, "run-2", "grant_eligibility")])
    return str(path)


def test_ls_lists_sessions_with_filters(db):
    result = runner.invoke(app, ["traces", "ls", "--db", db])
    assert result.exit_code == 0, result.output
    assert "5 of 5 sessions" in result.output and all(f"s{i}" in result.output for i in range(5))
    result = runner.invoke(app, ["traces", "ls", "--db", db, "--run", "run-1", "--min-reward", "1",
                                 "--max-reward", "2.5", "--json"])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["session_id"] for line in result.output.splitlines()] == ["s1", "s2"]
    result = runner.invoke(app, ["traces", "ls", "--db", db, "--status", "error", "--env", "loan", "--json"])
    assert [json.loads(line)["error"] for line in result.output.splitlines()] == ["[boom] tool crashed"]
    result = runner.invoke(app, ["traces", "ls", "--db", db, "--limit", "2"])
    assert "2 of 5 sessions" in result.output


def test_the_default_store_comes_from_the_environment(db):
    result = runner.invoke(app, ["traces", "ls", "--json"], env={"PROOFGYM_TRACES": db})
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) == 5


def test_a_missing_store_is_an_error_and_is_not_created(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in (["ls"], ["show", "s1"], ["export", "--out", "x.jsonl"]):
        result = runner.invoke(app, ["traces", *command], env={"PROOFGYM_TRACES": ""})
        assert result.exit_code == 2
        assert "traces/proofgym.db does not exist" in result.output
    result = runner.invoke(app, ["traces", "ls", "--db", str(tmp_path / "other.db")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert list(tmp_path.iterdir()) == []


def test_invalid_filters_exit_2(db):
    result = runner.invoke(app, ["traces", "ls", "--db", db, "--status", "finished"])
    assert result.exit_code == 2 and "status must be one of ok" in result.output
    result = runner.invoke(app, ["traces", "ls", "--db", db, "--min-reward", "nan"])
    assert result.exit_code == 2 and "min_reward must be a finite number" in result.output


def test_show_a_session_by_id(db):
    result = runner.invoke(app, ["traces", "show", "s3", "--db", db], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "session s3" in out and "[boom] tool crashed" in out and "2 steps" in out
    assert "rulebook: certified" in out and "tiny-lm: 11+7 tok 250 ms" in out and "shaped/format=+0.25" in out
    assert '{"answer": "a3.1"}' in out and "submit" in out


def test_show_by_correlation_id_lists_all_its_sessions(db):
    result = runner.invoke(app, ["traces", "show", "cid-1", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    shown = [SessionTrace.from_dict(json.loads(line)) for line in result.output.splitlines()]
    assert shown == [session(2), session(3)]
    result = runner.invoke(app, ["traces", "show", "nothing", "--db", db])
    assert result.exit_code == 1 and "no session or correlation id 'nothing'" in result.output


def test_export_jsonl_and_hf(db, tmp_path):
    out = tmp_path / "out" / "sessions.jsonl"
    result = runner.invoke(app, ["traces", "export", "--db", db, "--out", str(out), "--run", "run-1",
                                 "--min-reward", "2"])
    assert result.exit_code == 0, result.output
    assert "exported 2 session(s)" in result.output
    assert [SessionTrace.from_dict(json.loads(line)) for line in out.read_text().splitlines()] == [session(2),
                                                                                                  session(3)]
    from datasets import load_from_disk

    folder = tmp_path / "hf"
    result = runner.invoke(app, ["traces", "export", "--db", db, "--out", str(folder), "--format", "hf"])
    assert result.exit_code == 0, result.output
    dataset = load_from_disk(str(folder))
    assert dataset["session_id"] == ["s0", "s1", "s2", "s3", "s4"]
    assert dataset[1]["prompt"] == "q1" and dataset[1]["completion"] == "a1.1"
    result = runner.invoke(app, ["traces", "export", "--db", db, "--out", str(folder), "--format", "csv"])
    assert result.exit_code == 2
