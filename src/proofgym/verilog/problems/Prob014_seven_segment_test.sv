`timescale 1 ps/1 ps

// Testbench for Prob014_seven_segment: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// input vector.

module stimulus_gen (
  input clk,
  output reg [3:0] hex
);

  integer seed;
  integer i, j, k;

  // One input vector per 5 ps; the testbench samples 1 ps before the next vector.
  task step;
    #5;
  endtask

  initial begin
    seed = 111866;
    for (i = 0; i < 16; i = i + 1) begin
      hex <= i[3:0];
      step;
    end
    repeat (240) begin
      hex <= $random(seed);
      step;
    end
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire [3:0] hex;
  wire [6:0] seg_ref;
  wire [6:0] seg_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_seg = 0;
  integer errortime_seg = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .hex(hex)
  );

  RefModule good1 (
    .hex(hex),
    .seg(seg_ref)
  );

  TopModule top_module1 (
    .hex(hex),
    .seg(seg_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_seg = (seg_ref === (seg_ref ^ seg_dut ^ seg_ref));
  wire match_all = match_seg;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_seg) begin
        if (errors_seg == 0) errortime_seg = $time;
        errors_seg = errors_seg + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_seg != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "seg", errors_seg, errortime_seg);
    else
      $display("Hint: Output '%s' has no mismatches.", "seg");
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
