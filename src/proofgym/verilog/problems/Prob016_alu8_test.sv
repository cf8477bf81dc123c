`timescale 1 ps/1 ps

// Testbench for Prob016_alu8: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [2:0] op,
  output reg [7:0] a,
  output reg [7:0] b
);

  integer seed;
  integer i, j, k;
  reg [15:0] pairs [0:7];

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 127704;
    pairs[0] = {8'd0, 8'd0};     pairs[1] = {8'd255, 8'd1};
    pairs[2] = {8'd1, 8'd255};   pairs[3] = {8'd128, 8'd128};
    pairs[4] = {8'd127, 8'd1};   pairs[5] = {8'd128, 8'd1};
    pairs[6] = {8'd5, 8'd7};     pairs[7] = {8'd200, 8'd100};
    for (j = 0; j < 8; j = j + 1) begin
      op <= j[2:0];
      for (i = 0; i < 8; i = i + 1) begin
        {a, b} <= pairs[i];
        step;
      end
      repeat (150) begin
        a <= $random(seed);
        b <= $random(seed);
        step;
      end
    end
    repeat (200) begin
      op <= $random(seed);
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

  wire [2:0] op;
  wire [7:0] a;
  wire [7:0] b;
  wire [7:0] y_ref;
  wire [7:0] y_dut;
  wire zero_ref;
  wire zero_dut;
  wire carry_ref;
  wire carry_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_y = 0;
  integer errortime_y = 0;
  integer errors_zero = 0;
  integer errortime_zero = 0;
  integer errors_carry = 0;
  integer errortime_carry = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .op(op),
    .a(a),
    .b(b)
  );

  RefModule good1 (
    .op(op),
    .a(a),
    .b(b),
    .y(y_ref),
    .zero(zero_ref),
    .carry(carry_ref)
  );

  TopModule top_module1 (
    .op(op),
    .a(a),
    .b(b),
    .y(y_dut),
    .zero(zero_dut),
    .carry(carry_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_y = (y_ref === (y_ref ^ y_dut ^ y_ref));
  wire match_zero = (zero_ref === (zero_ref ^ zero_dut ^ zero_ref));
  wire match_carry = (carry_ref === (carry_ref ^ carry_dut ^ carry_ref));
  wire match_all = match_y && match_zero && match_carry;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_y) begin
        if (errors_y == 0) errortime_y = $time;
        errors_y = errors_y + 1;
      end
      if (!match_zero) begin
        if (errors_zero == 0) errortime_zero = $time;
        errors_zero = errors_zero + 1;
      end
      if (!match_carry) begin
        if (errors_carry == 0) errortime_carry = $time;
        errors_carry = errors_carry + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_y != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "y", errors_y, errortime_y);
    else
      $display("Hint: Output '%s' has no mismatches.", "y");
    if (errors_zero != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "zero", errors_zero, errortime_zero);
    else
      $display("Hint: Output '%s' has no mismatches.", "zero");
    if (errors_carry != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "carry", errors_carry, errortime_carry);
    else
      $display("Hint: Output '%s' has no mismatches.", "carry");
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
