`timescale 1 ps/1 ps

// Testbench for Prob030_debouncer: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg in
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 238570;
    reset = 1;
    in = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    // Pulses of every length from 1 to 8 cycles, separated by long gaps.
    for (i = 1; i <= 8; i = i + 1) begin
      in <= ~in;
      repeat (i) @(negedge clk);
      in <= ~in;
      repeat (10) @(negedge clk);
    end
    // Random run lengths of 1 to 8 cycles.
    repeat (150) begin
      j = ($random(seed) & 7) + 1;
      in <= ~in;
      repeat (j) @(negedge clk);
    end
    reset <= 1'b1;
    @(negedge clk) reset <= 1'b0;
    repeat (50) begin
      j = ($random(seed) & 7) + 1;
      in <= ~in;
      repeat (j) @(negedge clk);
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire in;
  wire out_ref;
  wire out_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_out = 0;
  integer errortime_out = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .in(in)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .in(in),
    .out(out_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .in(in),
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
