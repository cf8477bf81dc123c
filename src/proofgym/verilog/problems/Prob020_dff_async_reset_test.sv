`timescale 1 ps/1 ps

// Testbench for Prob020_dff_async_reset: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg areset,
  output reg [7:0] d
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 159380;
    areset = 1;
    d = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    areset <= 1'b0;
    repeat (10) @(negedge clk) d <= $random(seed);
    // Reset pulses that start and end between clock edges.
    repeat (300) begin
      @(negedge clk) d <= $random(seed);
      if (($random(seed) & 7) == 0) begin
        #2 areset <= 1'b1;
        #5 areset <= 1'b0;
      end
    end
    // A reset held over several edges, released just after a falling edge.
    @(negedge clk) d <= 8'h5A;
    #2 areset <= 1'b1;
    repeat (3) @(negedge clk) d <= $random(seed);
    areset <= 1'b0;
    repeat (20) @(negedge clk) d <= $random(seed);
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire areset;
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
    .areset(areset),
    .d(d)
  );

  RefModule good1 (
    .clk(clk),
    .areset(areset),
    .d(d),
    .q(q_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .areset(areset),
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
