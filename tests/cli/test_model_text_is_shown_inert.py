"""Model text a command prints cannot act on the terminal: a bidi override or an ESC sequence shows as a
``<U+XXXX>`` marker, and rich markup in it is printed as written (the viewer does the same on its pages)."""

from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.evaluation import parse_eval_config, run_eval
from proofgym.traces import TraceStore

runner = CliRunner()
HOSTILE = "deny\u202e timrep \x1b[2J [red]certified[/red] [/bold]"


def test_traces_show_prints_a_hostile_answer_inert(tmp_path):
    path = tmp_path / "t.db"
    section = parse_eval_config({"evaluation": {
        "env_name": "grant_eligibility", "policy_name": "scripted", "seeds": [0], "traces": str(path),
        "policy_config": {"actions": [HOSTILE]}}}).evaluation
    report = run_eval(section)
    with TraceStore(path) as store:
        [session] = store.list_sessions(run_id=report.run_id)
    result = runner.invoke(app, ["traces", "show", session.session_id, "--db", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.output and "\x1b" not in result.output
    assert "<U+202E>" in result.output and "<U+001B>" in result.output
    assert "[red]certified[/red]" in " ".join(result.output.split())


def test_score_prints_a_hostile_completion_inert(tmp_path):
    completions = tmp_path / "c.jsonl"
    completions.write_text('{"completion": "\\u202e[red]x[/red] \\u001b[31m <decision>\\u202epermit</decision>"}\n')
    result = runner.invoke(app, ["score", "--config", "configs/run/grant_eligibility.yaml", "--completions",
                                 str(completions)], env={"COLUMNS": "300"})
    assert "\u202e" not in result.output and "\x1b" not in result.output, result.output
