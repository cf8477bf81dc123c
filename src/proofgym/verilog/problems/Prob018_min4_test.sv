`timescale 1 ps/1 ps

// Testbench for Prob018_min4: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [7:0] a,
  output reg [7:0] b,
  output reg [7:0] c,
  output reg [7:0] d
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 143542;
    {a, b, c, d} <= {8'd7, 8'd7, 8'd7, 8'd7}; step;
    {a, b, c, d} <= {8'd1, 8'd9, 8'd9, 8'd9}; step;
    {a, b, c, d} <= {8'd9, 8'd1, 8'd9, 8'd9}; step;
    {a, b, c, d} <= {8'd9, 8'd9, 8'd1, 8'd9}; step;
    {a, b, c, d} <= {8'd9, 8'd9, 8'd9, 8'd1}; step;
    {a, b, c, d} <= {8'd255, 8'd128, 8'd200, 8'd0}; step;
    {a, b, c, d} <= {8'd0, 8'd255, 8'd255, 8'd255}; step;
    repeat (600) begin
      a <= $random(seed);
      b <= $random(seed);
      c <= $random(seed);
      d <= $random(seed);
      step;
    end
    // Small values: many ties.
    repeat (200) begin
      a <= $random(seed) & 3;
      b <= $random(seed) & 3;
      c <= $random(seed) & 3;
      d <= $random(seed) & 3;
      step;
    end
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire [7:0] a;
  wire [7:0] b;
  wire [7:0] c;
  wire [7:0] d;
  wire [7:0] min_ref;
  wire [7:0] min_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_min = 0;
  integer errortime_min = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .a(a),
    .b(b),
    .c(c),
    .d(d)
  );

  RefModule good1 (
    .a(a),
    .b(b),
    .c(c),
    .d(d),
    .min(min_ref)
  );

  TopModule top_module1 (
    .a(a),
    .b(b),
    .c(c),
    .d(d),
    .min(min_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_min = (min_ref === (min_ref ^ min_dut ^ min_ref));
  wire match_all = match_min;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_min) begin
        if (errors_min == 0) errortime_min = $time;
        errors_min = errors_min + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_min != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "min", errors_min, errortime_min);
    else
      $display("Hint: Output '%s' has no mismatches.", "min");
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
