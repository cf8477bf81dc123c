"""``proofgym verilog judge``: the verdict on the terminal or as JSON; exit status 0 whatever the outcome."""

import json

from typer.testing import CliRunner

from proofgym.cli import app

from ._support import AND_DESIGN, AND_REFERENCE, AND_TESTBENCH, OR_DESIGN, requires_judge

runner = CliRunner()


def problem_prefix(tmp_path):
    (tmp_path / "Prob900_and_prompt.txt").write_text("Implement TopModule: y = a & b.\n")
    (tmp_path / "Prob900_and_ref.sv").write_text(AND_REFERENCE)
    (tmp_path / "Prob900_and_test.sv").write_text(AND_TESTBENCH)
    return str(tmp_path / "Prob900_and")


def design_file(tmp_path, text, name="design.sv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@requires_judge
def test_json_verdict_of_a_pass_and_a_fail(tmp_path):
    prefix = problem_prefix(tmp_path)
    for design, outcome, mismatches in ((AND_DESIGN, "certified", 0), (OR_DESIGN, "refuted", None)):
        result = runner.invoke(app, ["verilog", "judge", "--problem", prefix, "--design",
                                     design_file(tmp_path, design), "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert {"outcome", "reason", "mismatches", "samples", "duration_s"} <= set(data)
        assert data["outcome"] == outcome and data["samples"] == 40
        assert mismatches is None or data["mismatches"] == mismatches


@requires_judge
def test_human_output_names_the_outcome_and_the_counts(tmp_path):
    result = runner.invoke(app, ["verilog", "judge", "--problem", problem_prefix(tmp_path), "--design",
                                 design_file(tmp_path, OR_DESIGN)])
    assert result.exit_code == 0
    assert "refuted" in result.output and "mismatches" in result.output and "in 40 samples" in result.output


@requires_judge
def test_a_syntax_error_is_an_outcome_not_a_command_error(tmp_path):
    result = runner.invoke(app, ["verilog", "judge", "--problem", problem_prefix(tmp_path), "--design",
                                 design_file(tmp_path, "module TopModule("), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["reason"] == "syntax_error"


def test_unknown_problem_and_missing_design_are_command_errors(tmp_path):
    result = runner.invoke(app, ["verilog", "judge", "--problem", "Prob999_nowhere", "--design",
                                 design_file(tmp_path, AND_DESIGN)])
    assert result.exit_code == 2 and "unknown Verilog problem" in result.output
    result = runner.invoke(app, ["verilog", "judge", "--problem", problem_prefix(tmp_path), "--design",
                                 str(tmp_path / "missing.sv")])
    assert result.exit_code == 2 and "missing.sv" in result.output
