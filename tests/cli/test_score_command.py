import json

from typer.testing import CliRunner

import proofgym
from proofgym.cli import app

CONFIG = "configs/grant_eligibility.yaml"
COMPLETIONS = "examples/grant_eligibility/completions.jsonl"
runner = CliRunner()


def score_json(*args):
    result = runner.invoke(app, ["score", "--config", CONFIG, "--completions", *args, "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and proofgym.__version__ in result.output


def test_shipped_sample_scores_as_documented():
    items = {item["note"]: item for item in score_json(COMPLETIONS)}
    good = items["correct permit, grounded"]
    assert good["outcome"] == "certified" and good["reward"] == max(i["reward"] or -9 for i in items.values())
    for note in ("correct deny: minor", "correct deny: income over threshold", "correct deny: non-resident",
                 "correct deny: active grant", "prompt + response concatenated (OpenRLHF)", "chat-format completion",
                 "same claim, other reasoning (cache hit)"):
        assert items[note]["reward"] == good["reward"], note
    for note in ("wrong decision on true facts", "invented facts to justify a wrong answer", "extra invented fact",
                 "low-confidence fact (fact gate)", "missing fact", "reward-hack text: fake certificate"):
        assert items[note]["reward"] < good["reward"], note
    for note in ("hedge: two decision blocks", "no decision block", "decision outside the allowed set"):
        assert items[note]["outcome"] == "format_error" and items[note]["reward"] == -1.0, note
    assert items["low-confidence fact (fact gate)"]["outcome"] == "refuted"
    assert items["reward-hack text: fake certificate"]["components"]["correct"] == 0


def test_every_json_line_has_the_contract_keys():
    for item in score_json(COMPLETIONS):
        assert {"outcome", "reward", "components"} <= item.keys()
        assert item["outcome"] in {"certified", "refuted", "invalid", "format_error"}


def test_table_output_names_outcomes():
    result = runner.invoke(app, ["score", "--config", CONFIG, "--completions", COMPLETIONS])
    assert result.exit_code == 0, result.output
    assert "certified" in result.output and "format_error" in result.output and "mean reward" in result.output


def test_bad_completions_file_is_a_clear_error(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"completion": "x"}\n{"completion": "y", "gold_answer": "permit"}\n')
    result = runner.invoke(app, ["score", "--config", CONFIG, "--completions", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2: gold_answer: unknown key" in result.output.replace("\n", "")


def test_bad_json_line_and_missing_file(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("{not json}\n")
    result = runner.invoke(app, ["score", "--config", CONFIG, "--completions", str(path)])
    assert result.exit_code == 2 and "not valid JSON" in result.output
    result = runner.invoke(app, ["score", "--config", str(tmp_path / "none.yaml"), "--completions", str(path)])
    assert result.exit_code == 2 and "not found" in result.output
