"""The allow-list scan of preprocessed designs: what it flags, and that nothing hides code from it."""

import pytest

from proofgym.verilog import ALLOWED_SYSTEM_FUNCTIONS, forbidden_constructs
from _bounds import LINEAR_SCAN_CPU_S, cpu_seconds


@pytest.mark.parametrize("name", [
    "$display", "$write", "$monitor", "$strobe", "$finish", "$stop", "$fatal", "$error", "$fopen", "$fgets",
    "$fwrite", "$fclose", "$readmemh", "$writememh", "$dumpfile", "$dumpvars", "$system", "$value$plusargs",
    "$test$plusargs", "$root", "$unit", "$sformat", "$somethingnew",
])
def test_output_file_io_control_and_unknown_names_are_forbidden(name):
    assert forbidden_constructs(f"initial x = {name}(y);") == [name]


def test_pure_functions_are_allowed():
    code = "assign y = $signed(a) + $clog2(W) + $bits(b) + $countones(c); initial r = $random; wire [$:0] q;"
    assert forbidden_constructs(code) == []
    assert "$display" not in ALLOWED_SYSTEM_FUNCTIONS and "$signed" in ALLOWED_SYSTEM_FUNCTIONS


def test_comments_are_skipped():
    assert forbidden_constructs("// $display(\"debug\")\n/* $fopen\n $finish */ assign y = a;") == []


def test_a_dollar_inside_an_identifier_is_not_a_system_name():
    assert forbidden_constructs("wire a$display, b$$fopen; assign a$display = 1;") == []


def test_a_string_cannot_open_a_comment_that_hides_code():
    assert forbidden_constructs('s = "/*"; $fopen("x"); // */') == ["$fopen"]
    assert forbidden_constructs('s = "//"; $finish;') == ["$finish"]


def test_an_escaped_identifier_cannot_open_a_comment_that_hides_code():
    assert forbidden_constructs("wire \\a/* ; $fopen(x); // */ ;") == ["$fopen"]


def test_strings_are_scanned_too():
    assert forbidden_constructs('initial s = "$display";') == ["$display"]


def test_directives_beyond_the_harmless_ones_are_forbidden():
    assert forbidden_constructs("`timescale 1ns/1ps\n`default_nettype none\nmodule m; endmodule") == []
    assert forbidden_constructs("`include \"x\"\n`line 1 \"y\" 0\n` pragma") == ["`include", "`line", "`pragma"]


def test_an_unterminated_comment_hides_nothing():
    assert forbidden_constructs("/* never closed\n$fopen(x);") == ["$fopen"]


@pytest.mark.parametrize("adversarial", ["/* " * 300_000, '"' * 600_000, "\\" * 600_000, "/**/" * 250_000,
                                         ('"' + "a" * 200 + "\n") * 5_000])
def test_the_scan_is_linear_on_adversarial_text(adversarial):
    found, cpu_s = cpu_seconds(lambda: forbidden_constructs(adversarial + "$fopen"))
    assert cpu_s < LINEAR_SCAN_CPU_S
