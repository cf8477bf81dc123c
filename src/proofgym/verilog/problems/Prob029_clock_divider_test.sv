`timescale 1 ps/1 ps

// Testbench for Prob029_clock_divider: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 230651;
    reset = 1;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    repeat (100) @(negedge clk);
    reset <= 1'b1;
    @(negedge clk) reset <= 1'b0;
    repeat (101) @(negedge clk);
    reset <= 1'b1;
    repeat (3) @(negedge clk);
    reset <= 1'b0;
    repeat (100) @(negedge clk);
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire clk_out_ref;
  wire clk_out_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_clk_out = 0;
  integer errortime_clk_out = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .clk_out(clk_out_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .clk_out(clk_out_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_clk_out = (clk_out_ref === (clk_out_ref ^ clk_out_dut ^ clk_out_ref));
  wire match_all = match_clk_out;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_clk_out) begin
        if (errors_clk_out == 0) errortime_clk_out = $time;
        errors_clk_out = errors_clk_out + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_clk_out != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "clk_out", errors_clk_out, errortime_clk_out);
    else
      $display("Hint: Output '%s' has no mismatches.", "clk_out");
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
