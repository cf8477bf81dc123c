`timescale 1 ps/1 ps

// Testbench for Prob006_adder4: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [3:0] a,
  output reg [3:0] b,
  output reg cin
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 48514;
    // Exhaustive: all 512 combinations of a, b and cin.
    for (i = 0; i < 512; i = i + 1) begin
      {a, b, cin} <= i[8:0];
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
  wire cin;
  wire [3:0] sum_ref;
  wire [3:0] sum_dut;
  wire cout_ref;
  wire cout_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_sum = 0;
  integer errortime_sum = 0;
  integer errors_cout = 0;
  integer errortime_cout = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .a(a),
    .b(b),
    .cin(cin)
  );

  RefModule good1 (
    .a(a),
    .b(b),
    .cin(cin),
    .sum(sum_ref),
    .cout(cout_ref)
  );

  TopModule top_module1 (
    .a(a),
    .b(b),
    .cin(cin),
    .sum(sum_dut),
    .cout(cout_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_sum = (sum_ref === (sum_ref ^ sum_dut ^ sum_ref));
  wire match_cout = (cout_ref === (cout_ref ^ cout_dut ^ cout_ref));
  wire match_all = match_sum && match_cout;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_sum) begin
        if (errors_sum == 0) errortime_sum = $time;
        errors_sum = errors_sum + 1;
      end
      if (!match_cout) begin
        if (errors_cout == 0) errortime_cout = $time;
        errors_cout = errors_cout + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_sum != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "sum", errors_sum, errortime_sum);
    else
      $display("Hint: Output '%s' has no mismatches.", "sum");
    if (errors_cout != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "cout", errors_cout, errortime_cout);
    else
      $display("Hint: Output '%s' has no mismatches.", "cout");
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
