"""`proofgym score` scores completions holding lone surrogates, NUL and controls like any others: each line gets
its outcome, nothing prints a traceback (the Verilog config raised UnicodeEncodeError out of the reward)."""

from __future__ import annotations

import json

import pytest
from _judge import requires_judge
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.verilog import builtin_problems, build_verilog_prompt

runner = CliRunner()


def _verilog_lines() -> list[str]:
    problem = builtin_problems()[sorted(builtin_problems())[0]]
    design = problem.reference.replace("module RefModule", "module TopModule", 1)
    prompt = build_verilog_prompt(problem)
    texts = [f"```verilog\n{design.replace('endmodule', f'// {bad}' + chr(10) + 'endmodule', 1)}\n```"
             for bad in ("\ud800", "\udfff\ud800", "\x00", "\x1b[2J")] + ["\ud800", "\x00"]
    # json.dumps writes a lone surrogate as its \ud800 escape: the file is valid UTF-8, as a trainer would write it.
    return [json.dumps({"completion": text, "prompt": prompt, "id": n}) for n, text in enumerate(texts)]


def _rulebook_lines(domain: str) -> list[str]:
    return [json.dumps({"completion": f"<reasoning>{bad}</reasoning><decision>{{\"classification\": \"deny\", "
                                      f"\"facts\": {{\"age\": 3}}}}</decision>{bad}", "gold": "deny", "id": n})
            for n, bad in enumerate(("\ud800", "\x00", "\udc00\ud800", "\u2028\ufeff"))]


@pytest.mark.parametrize("config", [pytest.param("verilog", marks=requires_judge), "grant_eligibility", "loan"])
def test_every_line_is_scored_and_nothing_raises(tmp_path, config):
    lines = _verilog_lines() if config == "verilog" else _rulebook_lines(config)
    completions = tmp_path / "completions.jsonl"
    completions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["score", "--config", f"configs/run/{config}.yaml", "--completions", str(completions),
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    items = [json.loads(line) for line in result.output.splitlines() if line.strip().startswith("{")]
    assert len(items) == len(lines)
    assert all(item["outcome"] in ("certified", "refuted", "invalid", "format_error") for item in items)
