`timescale 1 ps/1 ps

// Testbench for Prob004_mux2: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg sel,
  output reg [7:0] a,
  output reg [7:0] b
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 32676;
    sel <= 1'b0; a <= 8'hAA; b <= 8'h55; step;
    sel <= 1'b1; step;
    sel <= 1'b0; a <= 8'h00; b <= 8'hFF; step;
    sel <= 1'b1; step;
    repeat (300) begin
      sel <= $random(seed);
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

  wire sel;
  wire [7:0] a;
  wire [7:0] b;
  wire [7:0] out_ref;
  wire [7:0] out_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_out = 0;
  integer errortime_out = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .sel(sel),
    .a(a),
    .b(b)
  );

  RefModule good1 (
    .sel(sel),
    .a(a),
    .b(b),
    .out(out_ref)
  );

  TopModule top_module1 (
    .sel(sel),
    .a(a),
    .b(b),
    .out(out_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_out = (out_ref === (out_ref ^ out_dut ^ out_ref));
  wire match_all = match_out;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_out) begin
        if (errors_out == 0) errortime_out = $time;
        errors_out = errors_out + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_out != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "out", errors_out, errortime_out);
    else
      $display("Hint: Output '%s' has no mismatches.", "out");
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
