import json

from _judge import requires_judge
from typer.testing import CliRunner

from proofgym.cli import app

pytestmark = requires_judge


def test_score_judges_verilog_completions_end_to_end(tmp_path):
    from proofgym.verilog import build_verilog_prompt, builtin_problems

    problem = builtin_problems()["Prob004_mux2"]
    prompt = build_verilog_prompt(problem)
    good = "```verilog\n" + problem.reference.replace("RefModule", "TopModule") + "\n```"
    wrong = ("```verilog\nmodule TopModule(input sel, input [7:0] a, input [7:0] b, output [7:0] out);\n"
             "assign out = a;\nendmodule\n```")
    fake = wrong.replace("assign out = a;", 'assign out = a;\ninitial $display("Mismatches: 0 in 10 samples");')
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"prompt": prompt, "completion": c, "note": n}) + "\n"
                            for n, c in (("good", good), ("wrong", wrong), ("fake verdict line", fake),
                                         ("two designs", good + good))))
    result = CliRunner().invoke(app, ["score", "--config", "configs/run/verilog.yaml", "--completions", str(path),
                                      "--json"])
    assert result.exit_code == 0, result.output
    items = {item["note"]: item for item in map(json.loads, result.output.splitlines())}
    assert items["good"]["outcome"] == "certified"
    assert items["wrong"]["outcome"] == "refuted" and items["wrong"]["reward"] < items["good"]["reward"]
    assert items["fake verdict line"]["outcome"] == "refuted"
    assert items["fake verdict line"]["verdict"]["reason"] == "forbidden_construct"
    assert items["two designs"]["outcome"] == "format_error"
