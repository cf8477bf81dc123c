`timescale 1 ps/1 ps

// Testbench for Prob027_edge_detector: RefModule and TopModule see the same stimulus;
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
    seed = 214813;
    reset = 1;
    in = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    in <= 1'b1;
    repeat (3) @(negedge clk);
    in <= 1'b0;
    repeat (500) @(negedge clk) begin
      if (($random(seed) & 3) == 0) in <= ~in;
      reset <= (($random(seed) & 63) == 0);
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
  wire rise_ref;
  wire rise_dut;
  wire fall_ref;
  wire fall_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_rise = 0;
  integer errortime_rise = 0;
  integer errors_fall = 0;
  integer errortime_fall = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .in(in)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .in(in),
    .rise(rise_ref),
    .fall(fall_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .in(in),
    .rise(rise_dut),
    .fall(fall_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_rise = (rise_ref === (rise_ref ^ rise_dut ^ rise_ref));
  wire match_fall = (fall_ref === (fall_ref ^ fall_dut ^ fall_ref));
  wire match_all = match_rise && match_fall;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_rise) begin
        if (errors_rise == 0) errortime_rise = $time;
        errors_rise = errors_rise + 1;
      end
      if (!match_fall) begin
        if (errors_fall == 0) errortime_fall = $time;
        errors_fall = errors_fall + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_rise != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "rise", errors_rise, errortime_rise);
    else
      $display("Hint: Output '%s' has no mismatches.", "rise");
    if (errors_fall != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "fall", errors_fall, errortime_fall);
    else
      $display("Hint: Output '%s' has no mismatches.", "fall");
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
