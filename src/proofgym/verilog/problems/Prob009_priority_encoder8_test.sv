`timescale 1 ps/1 ps

// Testbench for Prob009_priority_encoder8: RefModule and TopModule see the same stimulus;
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
    seed = 72271;
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
  wire [2:0] pos_ref;
  wire [2:0] pos_dut;
  wire valid_ref;
  wire valid_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_pos = 0;
  integer errortime_pos = 0;
  integer errors_valid = 0;
  integer errortime_valid = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .in(in)
  );

  RefModule good1 (
    .in(in),
    .pos(pos_ref),
    .valid(valid_ref)
  );

  TopModule top_module1 (
    .in(in),
    .pos(pos_dut),
    .valid(valid_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_pos = (pos_ref === (pos_ref ^ pos_dut ^ pos_ref));
  wire match_valid = (valid_ref === (valid_ref ^ valid_dut ^ valid_ref));
  wire match_all = match_pos && match_valid;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_pos) begin
        if (errors_pos == 0) errortime_pos = $time;
        errors_pos = errors_pos + 1;
      end
      if (!match_valid) begin
        if (errors_valid == 0) errortime_valid = $time;
        errors_valid = errors_valid + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_pos != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "pos", errors_pos, errortime_pos);
    else
      $display("Hint: Output '%s' has no mismatches.", "pos");
    if (errors_valid != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "valid", errors_valid, errortime_valid);
    else
      $display("Hint: Output '%s' has no mismatches.", "valid");
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
