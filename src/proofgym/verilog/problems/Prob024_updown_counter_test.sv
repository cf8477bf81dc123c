`timescale 1 ps/1 ps

// Testbench for Prob024_updown_counter: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg en,
  output reg up
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 191056;
    reset = 1;
    en = 0;
    up = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    en <= 1'b1;
    up <= 1'b0;
    repeat (5) @(negedge clk);
    up <= 1'b1;
    repeat (10) @(negedge clk);
    repeat (600) @(negedge clk) begin
      en <= (($random(seed) & 3) != 0);
      if (($random(seed) & 7) == 0) up <= ~up;
      reset <= (($random(seed) & 127) == 0);
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire en;
  wire up;
  wire [7:0] count_ref;
  wire [7:0] count_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_count = 0;
  integer errortime_count = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .up(up)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .up(up),
    .count(count_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .up(up),
    .count(count_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_count = (count_ref === (count_ref ^ count_dut ^ count_ref));
  wire match_all = match_count;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_count) begin
        if (errors_count == 0) errortime_count = $time;
        errors_count = errors_count + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_count != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "count", errors_count, errortime_count);
    else
      $display("Hint: Output '%s' has no mismatches.", "count");
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
