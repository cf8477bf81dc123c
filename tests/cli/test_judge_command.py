"""``proofgym judge``: stored trajectories re-scored with a rubric set, shown per session with the means, and stored
as a new run of re-scored copies; one candidate text scored per criterion; every usage error one line, exit 2."""

from __future__ import annotations

import json
import textwrap

import pytest
import typer
from typer.testing import CliRunner

from proofgym.cli._judge import judge_command
from proofgym.judges import CRITERIA, JUDGE_SOURCE, register_criterion
from proofgym.traces import EnvEvent, OutcomeReward, SessionTrace, StepTrace, TraceStore

runner = CliRunner()
app = typer.Typer()
app.command("judge")(judge_command)


@app.callback()
def _root() -> None:
    """A test app holding only ``judge`` (as ``proofgym judge``)."""


@pytest.fixture(autouse=True)
def criteria():
    register_criterion("test.cli.tool_ok", lambda ctx: bool((ctx.step.env_event.result or {}).get("ok"))
                       if ctx.step.env_event is not None else None)
    register_criterion("test.cli.solved", lambda ctx: ctx.trace.outcome_reward is not None
                       and ctx.trace.outcome_reward.score == 1.0)
    register_criterion("test.cli.says_module", lambda ctx: "module" in str(ctx.step.action) if ctx.step else
                       "module" in str(ctx.trace.steps[-1].action))
    yield
    for name in ("test.cli.tool_ok", "test.cli.solved", "test.cli.says_module"):
        CRITERIA.unregister(name)


RUBRIC = {
    "event": {"id": "step", "criteria": [{"id": "tool_ok", "description": "The tool call worked.",
                                          "function": "test.cli.tool_ok"}]},
    "outcome": {"id": "whole", "version": "2", "criteria": [{"id": "solved", "description": "Solved.",
                                                            "function": "test.cli.solved"}]},
    "weights": {"env": 1.0, "event": 0.5, "outcome": 1.0},
}


def trace(session_id: str, run_id: str, oks: tuple[bool, ...], solved: bool) -> SessionTrace:
    steps = [StepTrace(index=i, observation=f"obs {i}", action={"tool": "t", "args": {"i": i}}, reward=0.0,
                       env_event=EnvEvent(tool="t", args={"i": i}, result={"ok": ok}), done=i == len(oks) - 1)
             for i, ok in enumerate(oks)]
    steps[-1].reward = 1.0 if solved else 0.0
    return SessionTrace(session_id=session_id, run_id=run_id, env_name="toy", seed=0, steps=steps,
                        outcome_reward=OutcomeReward(total=steps[-1].reward, steps=len(steps),
                                                     score=1.0 if solved else 0.0),
                        metadata={"note": session_id})


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "t.db"
    with TraceStore(path) as store:
        store.start_run("old", kind="eval", env_name="toy")
        store.write_session(trace("o1", "old", (True,), False))
        store.finish_run("old")
        store.start_run("r1", kind="eval", env_name="toy")
        store.write_sessions([trace("a", "r1", (True, True), True), trace("b", "r1", (False, True), False)])
        store.finish_run("r1")
    return path


@pytest.fixture
def rubric_file(tmp_path):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(RUBRIC))
    return path


def judge(*args):
    return runner.invoke(app, ["judge", *map(str, args)])


def test_the_latest_run_is_rescored_and_shown_per_session_with_the_means(store_path, rubric_file):
    result = judge("--rubric", rubric_file, "--traces", store_path, "--no-write")
    assert result.exit_code == 0, result.output
    assert "run r1 re-scored with event:step@1, outcome:whole@2" in " ".join(result.output.split())
    for column in ("session", "env return", "event total", "outcome total", "blended", "abstained", "mean"):
        assert column in result.output
    assert "wrote" not in result.output


def test_json_gives_each_sessions_blend_and_the_means(store_path, rubric_file):
    result = judge("--rubric", rubric_file, "--traces", store_path, "--no-write", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["run_id"] == "r1" and data["judges"] == ["programmatic"] and data["written_run"] is None
    a, b = data["sessions"]
    # a: env 1 + 0.5 x (1 + 1) + 1 x 1 = 3;  b: env 0 + 0.5 x (0 + 1) + 0 = 0.5
    assert (a["session_id"], a["reward"]["value"], a["reward"]["event_total"], a["reward"]["outcome_total"]) == \
        ("a", 3.0, 2.0, 1.0)
    assert (b["reward"]["value"], b["reward"]["event_total"], b["reward"]["outcome_total"]) == (0.5, 1.0, 0.0)
    assert data["means"] == {"env_return": 0.5, "event_total": 1.5, "outcome_total": 0.5, "blended": 1.75,
                             "marked": 0}


def test_write_stores_rescored_copies_as_a_new_judge_run(store_path, rubric_file):
    result = judge("--rubric", rubric_file, "--traces", store_path, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    new_run = data["written_run"]
    assert new_run.startswith("judge-")
    with TraceStore(store_path, create=False) as store:
        runs = {r.run_id: r for r in store.list_runs()}
        written = runs[new_run]
        assert written.kind == "judge" and written.status == "ok" and written.n_sessions == 2
        assert written.config["source_run"] == "r1" and written.config["judges"] == ["programmatic"]
        assert written.config["rubrics"] == ["event:step@1", "outcome:whole@2"]
        assert written.summary["blended"] == 1.75
        copies = list(store.iter_sessions(run_id=new_run))
        originals = {s.session_id: s for s in store.iter_sessions(run_id="r1")}
    assert sorted(c.metadata["rescored_from"] for c in copies) == ["a", "b"]
    for copy in copies:
        original = originals[copy.metadata["rescored_from"]]
        assert copy.session_id != original.session_id and copy.metadata["note"] == original.session_id
        assert copy.outcome_reward.source == JUDGE_SOURCE and copy.outcome_reward.kind == "blended"
        assert original.outcome_reward.source == "environment"  # the stored session is unchanged
        assert all(any(r.source == JUDGE_SOURCE for r in step.event_rewards) for step in copy.steps)
    assert {c.metadata["rescored_from"]: c.outcome_reward.total for c in copies} == {"a": 3.0, "b": 0.5}
    plain = judge("--rubric", rubric_file, "--traces", store_path)
    assert plain.exit_code == 0 and "wrote 2 re-scored sessions to run judge-" in plain.output
    # the default run is still the latest that is not a judge run
    assert "run r1 re-scored" in " ".join(plain.output.split())


def test_run_and_session_pick_what_is_rescored(store_path, rubric_file):
    by_run = json.loads(judge("--rubric", rubric_file, "--traces", store_path, "--run", "old", "--json",
                              "--no-write").output)
    assert by_run["run_id"] == "old" and [s["session_id"] for s in by_run["sessions"]] == ["o1"]
    one = json.loads(judge("--rubric", rubric_file, "--traces", store_path, "--session", "b", "--json",
                           "--no-write").output)
    assert one["run_id"] == "r1" and [s["session_id"] for s in one["sessions"]] == ["b"]


def test_a_references_form_rubric_file_is_read(store_path, tmp_path):
    path = tmp_path / "rubric.toml"
    path.write_text(textwrap.dedent("""
        [rubric.weights]
        env = 0.0
        outcome = 1.0
        [rubric.outcome]
        rubric_id = "solved@3"
        criteria = [{key = "solved", weight = 1.0, description = "Solved.", function = "test.cli.solved"}]
    """))
    data = json.loads(judge("--rubric", path, "--traces", store_path, "--json", "--no-write").output)
    assert data["rubrics"] == ["outcome:solved@3"] and [s["reward"]["value"] for s in data["sessions"]] == [1.0, 0.0]


LLM_RUBRIC = {"outcome": {"criteria": [
    {"id": "solved", "description": "Solved.", "function": "test.cli.solved"},
    {"id": "style", "description": "Is it clearly done?"}]}, "weights": {"env": 0.0, "outcome": 1.0}}


def test_llm_criteria_without_a_judge_url_are_refused_unless_skipped(store_path, tmp_path):
    path = tmp_path / "llm.json"
    path.write_text(json.dumps(LLM_RUBRIC))
    refused = judge("--rubric", path, "--traces", store_path, "--no-write")
    assert refused.exit_code == 2
    assert (f"error: {path}: criteria outcome.style need an LLM judge: pass --judge-url and --model, or "
            "--skip-llm-criteria to drop them") in " ".join(refused.output.split())
    skipped = judge("--rubric", path, "--traces", store_path, "--no-write", "--json", "--skip-llm-criteria")
    assert skipped.exit_code == 0, skipped.output
    data = json.loads(skipped.output)
    assert [c["id"] for c in data["sessions"][0]["outcome"]["criteria"]] == ["solved"]


def test_the_llm_judge_is_built_from_the_url_model_and_key_variable(store_path, tmp_path, monkeypatch):
    from proofgym.judges import CriterionVerdict, JudgeVerdict

    built = []

    class FakeLLMJudge:
        def __init__(self, base_url, model, *, api_key=None, **options):
            self.name = f"llm:{model}"
            built.append((base_url, model, api_key))
            self.closed = False

        async def judge(self, items):
            return [JudgeVerdict(self.name, tuple(CriterionVerdict(c.id, 0.5, "fine", self.name)
                                                  for c in item.rubric.criteria)) for item in items]

        def close(self):
            built.append("closed")

    import proofgym.judges as judges_package

    monkeypatch.setattr(judges_package, "LLMJudge", FakeLLMJudge, raising=False)
    monkeypatch.setenv("JUDGE_KEY", "k-2")
    path = tmp_path / "llm.json"
    path.write_text(json.dumps(LLM_RUBRIC))
    result = judge("--rubric", path, "--traces", store_path, "--no-write", "--json", "--judge-url",
                   "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "JUDGE_KEY")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["judges"] == ["programmatic", "llm:m"]
    assert [s["reward"]["outcome_total"] for s in data["sessions"]] == [0.75, 0.25]
    assert built == [("http://127.0.0.1:9/v1", "m", "k-2"), "closed"]


def test_a_candidate_text_is_scored_per_criterion_without_a_trace_store(tmp_path):
    rubric = tmp_path / "r.json"
    rubric.write_text(json.dumps({
        "event": {"criteria": [{"id": "has_module", "description": "Says module.", "function": "test.cli.says_module"},
                               {"id": "tool_ok", "description": "Tool worked.", "function": "test.cli.tool_ok"}]},
        "outcome": {"criteria": [{"id": "whole_module", "description": "Says module.",
                                  "function": "test.cli.says_module"}]}}))
    candidate = tmp_path / "c.v"
    candidate.write_text("module TopModule(); endmodule\n")
    result = judge("--rubric", rubric, "--candidate", candidate, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    [event] = data["events"]
    scores = {c["id"]: c["score"] for c in event["criteria"]}
    # tool_ok needs an env event the text lacks: it abstains, and so does the event level
    assert scores == {"has_module": 1.0, "tool_ok": None} and event["total"] is None
    assert data["outcome"]["criteria"][0]["score"] == 1.0 and data["reward"]["abstained"] == ["event"]
    table = judge("--rubric", rubric, "--candidate", candidate)
    assert table.exit_code == 0, table.output
    assert "has_module" in table.output and "abstain" in table.output and "whole_module" in table.output


@pytest.mark.parametrize("args, message", [
    (["--rubric", "missing.yaml"], "error: --rubric: no rubric file at 'missing.yaml'"),
    (["--run", "nope"], "error: --run: unknown run 'nope' in"),
    (["--session", "nope"], "error: --session: no session 'nope' in"),
    (["--judge-url", "http://127.0.0.1:9/v1"], "error: --judge-url needs --model"),
    (["--model", "m"], "error: --model names the LLM judge's model: pass --judge-url too"),
    (["--judge-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "PROOFGYM_TEST_UNSET_KEY"],
     "error: --api-key-env: the environment variable 'PROOFGYM_TEST_UNSET_KEY' is not set"),
    (["--candidate", "missing.txt"], "error: --candidate: cannot read 'missing.txt'"),
])
def test_usage_errors_are_one_line_and_exit_2(store_path, rubric_file, args, message, monkeypatch):
    monkeypatch.delenv("PROOFGYM_TEST_UNSET_KEY", raising=False)
    base = ["--traces", str(store_path)] + ([] if "--rubric" in args else ["--rubric", str(rubric_file)])
    result = judge(*base, *args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.output


def test_a_bad_rubric_names_the_file_and_key(store_path, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"outcome": {"criteria": [{"id": "x", "description": "d", "weight": 0}]}}))
    result = judge("--rubric", path, "--traces", store_path)
    assert result.exit_code == 2
    assert f"error: {path}: outcome.criteria[0].weight: Input should be greater than 0" in result.output


def test_a_missing_trace_store_is_an_error(tmp_path, rubric_file):
    result = judge("--rubric", rubric_file, "--traces", tmp_path / "none.db")
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert not (tmp_path / "none.db").exists()


def test_a_store_without_runs_is_an_error(tmp_path, rubric_file):
    TraceStore(tmp_path / "empty.db").close()
    result = judge("--rubric", rubric_file, "--traces", tmp_path / "empty.db")
    assert result.exit_code == 2 and "has no run with sessions to re-score" in result.output


def test_a_registered_rubric_set_is_named_without_a_file(tmp_path):
    from typer.testing import CliRunner

    from proofgym.cli import app

    candidate = tmp_path / "design.v"
    candidate.write_text("module TopModule(input a, output b); assign b = a; endmodule\n")
    result = CliRunner().invoke(app, ["judge", "--rubric", "verilog", "--candidate", str(candidate),
                                      "--skip-llm-criteria", "--json"])
    assert result.exit_code == 0, result.output
    assert "tests_passed" in result.output and "compilation_success" in result.output
    missing = CliRunner().invoke(app, ["judge", "--rubric", "no-such-rubric", "--candidate", str(candidate)])
    assert missing.exit_code == 2 and "registered rubric set" in missing.output
