"""Each attack that model-written Verilog made on an unprotected host (VERILOG.md) fails here, and never passes."""

import re

import pytest

from proofgym.core import Outcome
from proofgym.verilog import JudgeConfig, judge
from proofgym.verilog._judge import _DesignRun
from proofgym.verilog._toolchain import detect_toolchain

from ._support import AND_DESIGN, FAST, and_problem, requires_judge

pytestmark = requires_judge

PROBLEM = and_problem()


def body(statements: str, extra: str = "") -> str:
    """The correct AND design with ``statements`` added inside it (and ``extra`` after it)."""
    return AND_DESIGN.replace("endmodule", f"{statements}\nendmodule") + extra


def assert_never_passes(verdict, *reasons):
    assert verdict.outcome is Outcome.REFUTED, verdict
    if reasons:
        assert verdict.reason in reasons, (verdict.reason, verdict.evidence.get("detail"))


def test_reading_a_file_with_fopen_is_forbidden_before_anything_runs(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret words\n")
    design = body(f'integer f; reg [8*64:1] line; initial begin f = $fopen("{secret}", "r"); '
                  f'$fgets(line, f); end')
    verdict = judge(PROBLEM, design)
    assert_never_passes(verdict, "forbidden_construct")
    assert {"$fopen", "$fgets"} <= set(verdict.evidence["constructs"])
    assert "top secret" not in verdict.to_json()


def test_reading_proc_self_environ_is_forbidden():
    design = body('integer f, c; initial begin f = $fopen("/proc/self/environ", "r"); c = $fgetc(f); end')
    verdict = judge(PROBLEM, design)
    assert_never_passes(verdict, "forbidden_construct")
    assert "$fgetc" in verdict.evidence["constructs"]


@pytest.mark.parametrize("statement", [
    'integer f; initial begin f = $fopen("{target}", "w"); $fwrite(f, "%c", 8\'h7f); $fclose(f); end',
    'reg [7:0] m [0:3]; initial $writememh("{target}", m);',
    'initial begin $dumpfile("{target}"); $dumpvars; end',
])
def test_writing_files_is_forbidden_and_nothing_is_written(tmp_path, statement):
    target = tmp_path / "written-by-the-design"
    verdict = judge(PROBLEM, body(statement.replace("{target}", str(target))))
    assert_never_passes(verdict, "forbidden_construct")
    assert not target.exists()


def test_include_of_a_secret_file_is_rejected_without_leaking_it(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2 correct horse\n")
    for design in (body(f'wire w = `include "{secret}" ;'),
                   f'`define GRAB `include "{secret}"\n' + body("wire w = `GRAB ;")):
        verdict = judge(PROBLEM, design)
        assert_never_passes(verdict, "forbidden_construct")
        assert verdict.evidence["constructs"] == ["`include"]
        assert "hunter2" not in verdict.to_json()


def test_vpi_modules_cannot_be_loaded_and_a_model_written_vvp_is_never_run():
    run = _DesignRun(PROBLEM, detect_toolchain())
    script = run.script()
    vvp_lines = [line for line in script.splitlines() if re.search(r"\bvvp\b", line.split()[0])]
    # One simulation, of the file the compile in the same launch just wrote, without -m/-M.
    assert len(vvp_lines) == 1 and " -n sim.vvp " in vvp_lines[0]
    assert not re.search(r"\s-[mM]\b", script)
    assert script.index("-o sim.vvp") < script.index("-n sim.vvp")
    # A design that is vvp assembly loading a VPI module is just bad Verilog.
    evil = ':vpi_time_precision + 0;\n:vpi_module "/tmp/evil";\nS_0x1 .scope module, "TopModule";\n'
    assert_never_passes(judge(PROBLEM, evil), "syntax_error")


def test_forever_without_delay_times_out():
    verdict = judge(PROBLEM, body("reg x = 0; initial forever x = ~x;"), config=FAST)
    assert_never_passes(verdict, "timeout")


def test_zero_delay_oscillation_times_out():
    verdict = judge(PROBLEM, body("reg o = 0; initial #1 o = 1; always @(o) o <= ~o;"), config=FAST)
    assert_never_passes(verdict, "timeout")


def test_a_free_running_clock_without_finish_cannot_keep_the_run_alive():
    # An extra root module with a clock and no $finish: only `tb` is a root, so the run ends when it does.
    design = body("reg c = 0; always #1 c = ~c;", "\nmodule Forever; reg k = 0; always #1 k = ~k; endmodule\n")
    verdict = judge(PROBLEM, design, config=FAST)
    assert verdict.certified  # the design is correct and the run ended on time
    assert verdict.timings["sandbox_s"] < FAST.timeout_s


def test_a_display_flood_is_forbidden_and_output_is_capped_anyway():
    assert_never_passes(judge(PROBLEM, body('initial forever $display("flood");')), "forbidden_construct")
    # Output the design can still cause (thousands of compiler warnings) hits the output cap.
    wires = "\n".join(f"assign implicit{i} = 1'b0;" for i in range(3000))
    verdict = judge(PROBLEM, body(wires), config=JudgeConfig(output_kib=16))
    assert_never_passes(verdict, "resource_limit")
    assert verdict.evidence["limit"] == "output"


def test_stop_is_forbidden_and_vvp_never_reads_stdin():
    assert_never_passes(judge(PROBLEM, body("initial $stop;")), "forbidden_construct")
    script = _DesignRun(PROBLEM, detect_toolchain()).script()
    assert re.search(r"vvp'? -n sim\.vvp -none </dev/null", script)


@pytest.mark.parametrize("bomb", [
    "reg [1073741823:0] huge = 0; assign y = (a & b) | huge[7];",  # a 2^30-bit register
    "genvar i; wire [9999999:0] w; for (i = 0; i < 10000000; i = i + 1) begin : g assign w[i] = 1'b0; end\n"
    "assign y = (a & b) | w[9999999];",  # a 10M-iteration generate
    "reg [31:0] mem [0:268435455]; initial mem[5] = 0; assign y = (a & b) | mem[5][0];",  # 2^28 words
    "reg [1023:0] wide [0:16777215]; initial wide[5] = 0; assign y = (a & b) | wide[5][0];",  # 2 GiB
    "function automatic integer f(input integer n); f = n == 0 ? 0 : f(n - 1); endfunction\n"
    "integer r; initial r = f(100000000); assign y = (a & b) | r[0];",  # deep recursion
])
def test_resource_bombs_hit_a_limit_and_never_pass(bomb):
    # Each bomb feeds the output, so a judge that survived it would have to pass the design.
    design = AND_DESIGN.replace("assign y = a & b;", bomb)
    verdict = judge(PROBLEM, design, config=FAST)
    assert_never_passes(verdict, "resource_limit", "timeout", "syntax_error")


def test_the_design_cannot_see_the_testbench_while_it_is_preprocessed(tmp_path):
    # Even a relative include (rejected anyway) would find only the design in the job directory.
    assert_never_passes(judge(PROBLEM, body('wire w = `include "tb.sv" ;')), "forbidden_construct")
