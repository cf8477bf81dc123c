`timescale 1 ps/1 ps

// Testbench for Prob003_xor_gate: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg a,
  output reg b
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 24757;
    for (i = 0; i < 4; i = i + 1) begin
      {a, b} <= i[1:0];
      step;
    end
    for (i = 3; i >= 0; i = i - 1) begin
      {a, b} <= i[1:0];
      step;
    end
    repeat (200) begin
      {a, b} <= $random(seed);
      step;
    end
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire a;
  wire b;
  wire out_ref;
  wire out_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_out = 0;
  integer errortime_out = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .a(a),
    .b(b)
  );

  RefModule good1 (
    .a(a),
    .b(b),
    .out(out_ref)
  );

  TopModule top_module1 (
    .a(a),
    .b(b),
    .out(out_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_out = (out_ref === (out_ref ^ out_dut ^ out_ref));
  wire match_all = match_out;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_out) begin
        if (errors_out == 0) errortime_out = $time;
        errors_out = errors_out + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_out != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "out", errors_out, errortime_out);
    else
      $display("Hint: Output '%s' has no mismatches.", "out");
    $display("Hint: Total mismatched samples is %0d out of %0d samples", errors, samples);
    $display("Simulation finished at %0d ps", $time);
    $display("Mismatches: %0d in %0d samples", errors, samples);
  end

  initial begin
    #1000000;
    $display("TIMEOUT");
    $finish;
  end

endmodule
