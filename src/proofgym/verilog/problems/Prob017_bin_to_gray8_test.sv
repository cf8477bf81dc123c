`timescale 1 ps/1 ps

// Testbench for Prob017_bin_to_gray8: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [7:0] bin
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 135623;
    for (i = 0; i < 256; i = i + 1) begin
      bin <= i[7:0];
      step;
    end
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire [7:0] bin;
  wire [7:0] gray_ref;
  wire [7:0] gray_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_gray = 0;
  integer errortime_gray = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .bin(bin)
  );

  RefModule good1 (
    .bin(bin),
    .gray(gray_ref)
  );

  TopModule top_module1 (
    .bin(bin),
    .gray(gray_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_gray = (gray_ref === (gray_ref ^ gray_dut ^ gray_ref));
  wire match_all = match_gray;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_gray) begin
        if (errors_gray == 0) errortime_gray = $time;
        errors_gray = errors_gray + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_gray != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "gray", errors_gray, errortime_gray);
    else
      $display("Hint: Output '%s' has no mismatches.", "gray");
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
