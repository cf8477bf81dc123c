`timescale 1 ps/1 ps

// Testbench for Prob032_gray_counter: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg en
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 254408;
    reset = 1;
    en = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    en <= 1'b1;
    repeat (40) @(negedge clk);
    repeat (300) @(negedge clk) begin
      en <= (($random(seed) & 3) != 0);
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
  wire en;
  wire [3:0] g_ref;
  wire [3:0] g_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_g = 0;
  integer errortime_g = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .en(en)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .g(g_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .g(g_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_g = (g_ref === (g_ref ^ g_dut ^ g_ref));
  wire match_all = match_g;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_g) begin
        if (errors_g == 0) errortime_g = $time;
        errors_g = errors_g + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_g != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "g", errors_g, errortime_g);
    else
      $display("Hint: Output '%s' has no mismatches.", "g");
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
