import json

import pytest
from typer.testing import CliRunner

import proofgym
from proofgym.cli import app

runner = CliRunner()
DOMAINS = ["grant_eligibility", "loan"]


def score_json(domain):
    result = runner.invoke(app, ["score", "--config", f"configs/run/{domain}.yaml", "--completions",
                                 f"examples/{domain}/completions.jsonl", "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and proofgym.__version__ in result.output


@pytest.mark.parametrize("domain", DOMAINS)
def test_shipped_samples_score_as_documented(domain):
    items = score_json(domain)
    top = max(item["reward"] for item in items if item["reward"] is not None)
    by_note = {item["note"]: item for item in items}
    gold = [item for item in items if item["note"].startswith("gold") and "other reasoning" not in item["note"]]
    assert len(gold) >= 5
    for item in gold:  # every branch, chat format, prompt + response: certified, correct, top reward
        assert item["outcome"] == "certified" and item["reward"] == top, item["note"]
        assert item["verdict"]["evidence"]["proof_checked"] is True
    for note, item in by_note.items():
        if not note.startswith("gold"):
            assert item["reward"] < top - 0.5, note  # nothing wrong, ungrounded or hedged comes close
    for note in ("hedge: two decision blocks", "no decision block", "decision outside the allowed set"):
        assert by_note[note]["outcome"] == "format_error" and by_note[note]["reward"] == -1.0
    assert by_note["low-confidence fact"]["outcome"] == "refuted"
    assert by_note["reward-hack text, wrong decision"]["components"]["correct"] == 0


def test_every_json_line_has_the_contract_keys():
    for item in score_json("grant_eligibility"):
        assert {"outcome", "reward", "components"} <= item.keys()
        assert item["outcome"] in {"certified", "refuted", "invalid", "format_error"}


def test_table_output_names_outcomes():
    result = runner.invoke(app, ["score", "--config", "configs/run/grant_eligibility.yaml", "--completions",
                                 "examples/grant_eligibility/completions.jsonl"])
    assert result.exit_code == 0, result.output
    assert "certified" in result.output and "format_error" in result.output and "mean reward" in result.output


def test_bad_completions_file_is_a_clear_error(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"completion": "x"}\n{"completion": "y", "gold_answer": "permit"}\n')
    result = runner.invoke(app, ["score", "--config", "configs/run/grant_eligibility.yaml", "--completions", str(path)])
    assert result.exit_code == 2
    def squeeze(text: str) -> str:  # rich wraps long paths at the terminal width
        return "".join(text.split())

    assert squeeze(f"{path}:2: gold_answer: unknown key") in squeeze(result.output)


def test_bad_json_line_and_missing_file(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("{not json}\n")
    result = runner.invoke(app, ["score", "--config", "configs/run/grant_eligibility.yaml", "--completions", str(path)])
    assert result.exit_code == 2 and "not valid JSON" in result.output
    result = runner.invoke(app, ["score", "--config", str(tmp_path / "none.yaml"), "--completions", str(path)])
    assert result.exit_code == 2 and "not found" in result.output
