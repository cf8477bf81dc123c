`timescale 1 ps/1 ps

// Testbench for Prob034_seq_detect_mealy: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg areset,
  output reg in
);

  integer seed;
  integer i, j, k;
  reg [15:0] pattern;

  initial begin
    seed = 270246;
    areset = 1;
    in = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    areset <= 1'b0;
    pattern = 16'b1010_1001_0110_1011;
    for (i = 15; i >= 0; i = i - 1) begin
      in <= pattern[i];
      @(negedge clk);
    end
    repeat (600) begin
      @(negedge clk) in <= $random(seed);
      if (($random(seed) & 63) == 0) begin
        #2 areset <= 1'b1;
        #5 areset <= 1'b0;
      end
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire areset;
  wire in;
  wire z_ref;
  wire z_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_z = 0;
  integer errortime_z = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .areset(areset),
    .in(in)
  );

  RefModule good1 (
    .clk(clk),
    .areset(areset),
    .in(in),
    .z(z_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .areset(areset),
    .in(in),
    .z(z_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_z = (z_ref === (z_ref ^ z_dut ^ z_ref));
  wire match_all = match_z;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_z) begin
        if (errors_z == 0) errortime_z = $time;
        errors_z = errors_z + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_z != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "z", errors_z, errortime_z);
    else
      $display("Hint: Output '%s' has no mismatches.", "z");
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
