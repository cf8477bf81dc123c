"""Shared helpers for the Verilog judge tests: skips, the dataset, small hand-written problems, mutations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _judge import requires_judge  # noqa: F401  (the one check, re-exported)

from proofgym.verilog import JudgeConfig, Problem, interface

DATASET = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "verilog-eval-v2"
SPEC_TO_RTL = DATASET / "dataset_spec-to-rtl"


requires_dataset = pytest.mark.skipif(not SPEC_TO_RTL.is_dir(), reason=f"VerilogEval v2 not found at {DATASET}")

# Small limits keep the hang and bomb tests short; everything else is the default.
FAST = JudgeConfig(timeout_s=2.0, cpu_s=2)

# A problem small enough to reason about: TopModule must compute y = a & b; the testbench has the
# VerilogEval shape (40 samples, one verdict line).
AND_REFERENCE = """
module RefModule (
  input a,
  input b,
  output y
);
  assign y = a & b;
endmodule
"""

AND_TESTBENCH = """
`timescale 1 ps/1 ps
module tb();
  reg clk = 0;
  reg a = 0, b = 0;
  wire y_ref, y_dut;
  integer errors = 0, clocks = 0;
  initial forever #5 clk = ~clk;
  RefModule good1 (.a(a), .b(b), .y(y_ref));
  TopModule top_module1 (.a(a), .b(b), .y(y_dut));
  initial begin
    repeat (40) @(negedge clk) {a, b} = $random;
    #1 $finish;
  end
  always @(posedge clk) begin
    clocks++;
    if (y_ref !== (y_ref ^ y_dut ^ y_ref)) errors++;
  end
  final begin
    if (errors) $display("Hint: Output '%s' has %0d mismatches.", "y", errors);
    else $display("Hint: Output '%s' has no mismatches.", "y");
    $display("Mismatches: %1d in %1d samples", errors, clocks);
  end
endmodule
"""

AND_DESIGN = """
module TopModule (input a, input b, output y);
  assign y = a & b;
endmodule
"""

OR_DESIGN = AND_DESIGN.replace("a & b", "a | b")


def and_problem(testbench: str = AND_TESTBENCH, reference: str = AND_REFERENCE, id: str = "and_gate") -> Problem:
    return Problem(id=id, spec="Implement TopModule with y = a & b.", reference=reference, testbench=testbench,
                   source="test")


def verilogeval(problem_id: str) -> Problem:
    from proofgym.verilog import load_problem

    return load_problem(SPEC_TO_RTL / problem_id)


def reference_design(problem: Problem) -> str:
    """The reference solution, renamed to be the design."""
    return re.sub(r"\bRefModule\b", "TopModule", problem.reference)


_PORT = re.compile(r"\b(input|output|inout)\b")


def ports(problem: Problem) -> list[tuple[str, str, str]]:
    """``(direction, range, name)`` of each port in the reference's ANSI header."""
    header = interface(problem)
    body = header[header.index("(") + 1 : header.rindex(")")]
    body = re.sub(r"//[^\n]*", "", body)
    result = []
    direction, width = "input", ""
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        found = _PORT.search(item)
        if found:
            direction = found.group(1)
            ranged = re.search(r"(\[[^\]]*\])", item)
            width = ranged.group(1) if ranged else ""
        result.append((direction, width, re.findall(r"[A-Za-z_]\w*", item)[-1]))
    return result


def inverted_output_design(problem: Problem) -> str:
    """The reference wrapped so that its first output comes out inverted: a design that must fail."""
    inner = re.sub(r"\bRefModule\b", "InnerReference", problem.reference)
    declared = ports(problem)
    target = next(name for direction, _, name in declared if direction == "output")
    header = re.sub(r"\b(reg|logic)\b", "", interface(problem))
    width = next(w for direction, w, name in declared if name == target)
    connections = ", ".join(f".{name}({name}_inner)" if name == target else f".{name}({name})"
                            for _, _, name in declared)
    return (f"{inner}\n{header}\n  wire {width} {target}_inner;\n  InnerReference inner ({connections});\n"
            f"  assign {target} = ~{target}_inner;\nendmodule\n")


def _variant(*edits: tuple[str, str]) -> str:
    text = AND_TESTBENCH
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


# Testbenches that misbehave only for a design that drives 'z': they stand in for a design that
# found a way to print, to shorten the run or to silence the verdict, so that each of the judge's
# later defences is tested on its own. The reference never drives 'z', so its own run is clean.
LEAKY_TESTBENCH = _variant(("  final begin",
                            '  always @(y_dut) if (y_dut === 1\'bz) $display("Mismatches: 0 in 40 samples");\n'
                            "  final begin"))
SHORT_TESTBENCH = _variant(("clocks++;", "if (y_dut !== 1'bz) clocks++;"),
                           ("if (y_ref !==", "if (y_dut !== 1'bz && y_ref !=="))
SILENT_TESTBENCH = _variant(('    $display("Mismatches:', '    if (y_dut !== 1\'bz) $display("Mismatches:'))

# Drives 'z' after 300 ps (the run lasts ~400 ps), the right value before.
LATE_Z_DESIGN = """
module TopModule (input a, input b, output y);
  assign y = $time > 300 ? 1'bz : a & b;
endmodule
"""

# Two outputs: y = a & b and z = a | b, each checked, one verdict line for both.
TWO_OUTPUT_REFERENCE = """
module RefModule (input a, input b, output y, output z);
  assign y = a & b;
  assign z = a | b;
endmodule
"""
TWO_OUTPUT_TESTBENCH = _variant(
    ("wire y_ref, y_dut;", "wire y_ref, y_dut, z_ref, z_dut;\n  integer errors_y = 0, errors_z = 0;"),
    (".y(y_ref));", ".y(y_ref), .z(z_ref));"),
    (".y(y_dut));", ".y(y_dut), .z(z_dut));"),
    ("    if (y_ref !== (y_ref ^ y_dut ^ y_ref)) errors++;",
     "    if ({y_ref, z_ref} !== ({y_ref, z_ref} ^ {y_dut, z_dut} ^ {y_ref, z_ref})) errors++;\n"
     "    if (y_ref !== (y_ref ^ y_dut ^ y_ref)) errors_y++;\n"
     "    if (z_ref !== (z_ref ^ z_dut ^ z_ref)) errors_z++;"),
    ('    if (errors) $display("Hint: Output \'%s\' has %0d mismatches.", "y", errors);\n'
     '    else $display("Hint: Output \'%s\' has no mismatches.", "y");',
     '    if (errors_y) $display("Hint: Output \'%s\' has %0d mismatches.", "y", errors_y);\n'
     '    else $display("Hint: Output \'%s\' has no mismatches.", "y");\n'
     '    if (errors_z) $display("Hint: Output \'%s\' has %0d mismatches.", "z", errors_z);\n'
     '    else $display("Hint: Output \'%s\' has no mismatches.", "z");'),
)
