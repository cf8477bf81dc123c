`timescale 1 ps/1 ps

// Testbench for Prob035_traffic_light: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg car
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 278165;
    reset = 1;
    car = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    repeat (10) @(negedge clk);
    car <= 1'b1;
    repeat (40) @(negedge clk);
    car <= 1'b0;
    // A long wait (the green phase outlasts any small counter), then a car.
    repeat (40) @(negedge clk);
    car <= 1'b1;
    @(negedge clk) car <= 1'b0;
    repeat (20) @(negedge clk);
    repeat (500) @(negedge clk) begin
      car <= (($random(seed) & 3) == 0);
      reset <= (($random(seed) & 127) == 0);
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire car;
  wire [2:0] main_ref;
  wire [2:0] main_dut;
  wire [2:0] side_ref;
  wire [2:0] side_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_main = 0;
  integer errortime_main = 0;
  integer errors_side = 0;
  integer errortime_side = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .car(car)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .car(car),
    .main(main_ref),
    .side(side_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .car(car),
    .main(main_dut),
    .side(side_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_main = (main_ref === (main_ref ^ main_dut ^ main_ref));
  wire match_side = (side_ref === (side_ref ^ side_dut ^ side_ref));
  wire match_all = match_main && match_side;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_main) begin
        if (errors_main == 0) errortime_main = $time;
        errors_main = errors_main + 1;
      end
      if (!match_side) begin
        if (errors_side == 0) errortime_side = $time;
        errors_side = errors_side + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_main != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "main", errors_main, errortime_main);
    else
      $display("Hint: Output '%s' has no mismatches.", "main");
    if (errors_side != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "side", errors_side, errortime_side);
    else
      $display("Hint: Output '%s' has no mismatches.", "side");
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
