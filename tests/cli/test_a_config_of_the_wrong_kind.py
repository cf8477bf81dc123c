"""A file given to a command that reads another kind of file is one line naming the file, the kind it is (the kind it
declares, else what its keys show), the command that reads it and the kind the command wants, for every command that
takes a config file: not one key error per section it has and lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.config import EVAL_CONFIG, RL_CONFIG, RULEBOOK, RUN_CONFIG

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
#: A shipped file of each kind.
SHIPPED = {RUN_CONFIG: ROOT / "configs" / "run" / "grant_eligibility.yaml",
           RL_CONFIG: ROOT / "configs" / "rl" / "fact_finding_tiny.toml",
           EVAL_CONFIG: ROOT / "configs" / "eval" / "grant.toml",
           RULEBOOK: ROOT / "src" / "proofgym" / "domains" / "grant_eligibility.yaml"}
#: Each command: its arguments before and after the file, the kinds it reads and what it says it wants.
COMMANDS = {
    "train": (["train", "--config"], [], {RUN_CONFIG, RL_CONFIG}, "kind run or rl"),
    "eval": (["eval", "--config"], [], {EVAL_CONFIG}, "kind eval"),
    "score": (["score", "--config"], ["--completions", "{completions}"], {RUN_CONFIG}, "kind run"),
    "serve-reward": (["serve-reward", "--config"], [], {RUN_CONFIG}, "kind run"),
    "rules validate": (["rules", "validate"], [], {RULEBOOK}, "a rulebook"),
    "judge": (["judge", "--rubric"], ["--candidate", "{completions}", "--no-write"], {RL_CONFIG},
              "a rubric set or kind rl"),
}
CASES = [(command, kind) for command, (_, _, reads, _) in COMMANDS.items() for kind in SHIPPED if kind not in reads]


@pytest.mark.parametrize("command, kind", CASES, ids=[f"{command}-{kind.name}" for command, kind in CASES])
def test_a_config_of_another_kind_is_one_line_naming_its_command(tmp_path, command, kind):
    completions = tmp_path / "completions.jsonl"
    completions.write_text(json.dumps({"completion": "<decision>{}</decision>"}) + "\n")
    before, after, _, wanted = COMMANDS[command]
    path = SHIPPED[kind]
    result = runner.invoke(app, [*before, str(path), *(arg.format(completions=completions) for arg in after)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    why = f"it declares kind {kind.tag}" if kind.tag else "it has "
    assert line.startswith(f"error: {path}: this is {kind} ({why}"), line
    assert line.endswith(f"), for {kind.command}; this command wants {wanted}"), line
