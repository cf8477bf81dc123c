`timescale 1 ps/1 ps

// Testbench for Prob013_bit_reverse8: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [7:0] in
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 103947;
    for (i = 0; i < 256; i = i + 1) begin
      in <= i[7:0];
      step;
    end
    repeat (50) begin
      in <= $random(seed);
      step;
    end
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire [7:0] in;
  wire [7:0] out_ref;
  wire [7:0] out_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_out = 0;
  integer errortime_out = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .in(in)
  );

  RefModule good1 (
    .in(in),
    .out(out_ref)
  );

  TopModule top_module1 (
    .in(in),
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
