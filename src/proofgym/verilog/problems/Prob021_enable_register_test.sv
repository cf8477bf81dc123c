`timescale 1 ps/1 ps

// Testbench for Prob021_enable_register: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg en,
  output reg [7:0] d
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 167299;
    reset = 1;
    en = 0;
    d = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    @(negedge clk) begin en <= 1'b1; d <= 8'h81; end
    @(negedge clk) begin en <= 1'b0; d <= 8'h7E; end
    @(negedge clk) reset <= 1'b1;
    @(negedge clk) reset <= 1'b0;
    repeat (500) @(negedge clk) begin
      en <= $random(seed);
      d <= $random(seed);
      reset <= (($random(seed) & 15) == 0);
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
  wire [7:0] d;
  wire [7:0] q_ref;
  wire [7:0] q_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_q = 0;
  integer errortime_q = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .d(d)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .d(d),
    .q(q_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .en(en),
    .d(d),
    .q(q_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_q = (q_ref === (q_ref ^ q_dut ^ q_ref));
  wire match_all = match_q;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_q) begin
        if (errors_q == 0) errortime_q = $time;
        errors_q = errors_q + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_q != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "q", errors_q, errortime_q);
    else
      $display("Hint: Output '%s' has no mismatches.", "q");
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
