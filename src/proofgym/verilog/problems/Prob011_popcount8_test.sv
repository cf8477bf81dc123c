`timescale 1 ps/1 ps

// Testbench for Prob011_popcount8: RefModule and TopModule see the same stimulus;
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
    seed = 88109;
    for (i = 0; i < 256; i = i + 1) begin
      in <= i[7:0];
      step;
    end
    repeat (100) begin
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
  wire [3:0] count_ref;
  wire [3:0] count_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_count = 0;
  integer errortime_count = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .in(in)
  );

  RefModule good1 (
    .in(in),
    .count(count_ref)
  );

  TopModule top_module1 (
    .in(in),
    .count(count_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_count = (count_ref === (count_ref ^ count_dut ^ count_ref));
  wire match_all = match_count;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_count) begin
        if (errors_count == 0) errortime_count = $time;
        errors_count = errors_count + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_count != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "count", errors_count, errortime_count);
    else
      $display("Hint: Output '%s' has no mismatches.", "count");
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
