`timescale 1 ps/1 ps

// Testbench for Prob007_subtractor8: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [7:0] a,
  output reg [7:0] b
);

  integer seed;
  integer i, j, k;
  reg [15:0] pairs [0:9];

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 56433;
    pairs[0] = {8'd0, 8'd0};     pairs[1] = {8'd0, 8'd1};
    pairs[2] = {8'd255, 8'd255}; pairs[3] = {8'd0, 8'd255};
    pairs[4] = {8'd255, 8'd0};   pairs[5] = {8'd128, 8'd127};
    pairs[6] = {8'd127, 8'd128}; pairs[7] = {8'd200, 8'd50};
    pairs[8] = {8'd50, 8'd200};  pairs[9] = {8'd1, 8'd0};
    for (i = 0; i < 10; i = i + 1) begin
      {a, b} <= pairs[i];
      step;
    end
    repeat (600) begin
      a <= $random(seed);
      b <= $random(seed);
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
  wire [7:0] diff_ref;
  wire [7:0] diff_dut;
  wire borrow_ref;
  wire borrow_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_diff = 0;
  integer errortime_diff = 0;
  integer errors_borrow = 0;
  integer errortime_borrow = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .a(a),
    .b(b)
  );

  RefModule good1 (
    .a(a),
    .b(b),
    .diff(diff_ref),
    .borrow(borrow_ref)
  );

  TopModule top_module1 (
    .a(a),
    .b(b),
    .diff(diff_dut),
    .borrow(borrow_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_diff = (diff_ref === (diff_ref ^ diff_dut ^ diff_ref));
  wire match_borrow = (borrow_ref === (borrow_ref ^ borrow_dut ^ borrow_ref));
  wire match_all = match_diff && match_borrow;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_diff) begin
        if (errors_diff == 0) errortime_diff = $time;
        errors_diff = errors_diff + 1;
      end
      if (!match_borrow) begin
        if (errors_borrow == 0) errortime_borrow = $time;
        errors_borrow = errors_borrow + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_diff != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "diff", errors_diff, errortime_diff);
    else
      $display("Hint: Output '%s' has no mismatches.", "diff");
    if (errors_borrow != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "borrow", errors_borrow, errortime_borrow);
    else
      $display("Hint: Output '%s' has no mismatches.", "borrow");
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
