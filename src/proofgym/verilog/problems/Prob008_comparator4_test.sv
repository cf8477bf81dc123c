`timescale 1 ps/1 ps

// Testbench for Prob008_comparator4: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [3:0] a,
  output reg [3:0] b
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 64352;
    // Exhaustive, then random.
    for (i = 0; i < 256; i = i + 1) begin
      {a, b} <= i[7:0];
      step;
    end
    repeat (100) begin
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

  wire [3:0] a;
  wire [3:0] b;
  wire lt_ref;
  wire lt_dut;
  wire eq_ref;
  wire eq_dut;
  wire gt_ref;
  wire gt_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_lt = 0;
  integer errortime_lt = 0;
  integer errors_eq = 0;
  integer errortime_eq = 0;
  integer errors_gt = 0;
  integer errortime_gt = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .a(a),
    .b(b)
  );

  RefModule good1 (
    .a(a),
    .b(b),
    .lt(lt_ref),
    .eq(eq_ref),
    .gt(gt_ref)
  );

  TopModule top_module1 (
    .a(a),
    .b(b),
    .lt(lt_dut),
    .eq(eq_dut),
    .gt(gt_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_lt = (lt_ref === (lt_ref ^ lt_dut ^ lt_ref));
  wire match_eq = (eq_ref === (eq_ref ^ eq_dut ^ eq_ref));
  wire match_gt = (gt_ref === (gt_ref ^ gt_dut ^ gt_ref));
  wire match_all = match_lt && match_eq && match_gt;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_lt) begin
        if (errors_lt == 0) errortime_lt = $time;
        errors_lt = errors_lt + 1;
      end
      if (!match_eq) begin
        if (errors_eq == 0) errortime_eq = $time;
        errors_eq = errors_eq + 1;
      end
      if (!match_gt) begin
        if (errors_gt == 0) errortime_gt = $time;
        errors_gt = errors_gt + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_lt != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "lt", errors_lt, errortime_lt);
    else
      $display("Hint: Output '%s' has no mismatches.", "lt");
    if (errors_eq != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "eq", errors_eq, errortime_eq);
    else
      $display("Hint: Output '%s' has no mismatches.", "eq");
    if (errors_gt != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "gt", errors_gt, errortime_gt);
    else
      $display("Hint: Output '%s' has no mismatches.", "gt");
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
