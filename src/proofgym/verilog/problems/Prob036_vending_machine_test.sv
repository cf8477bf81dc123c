`timescale 1 ps/1 ps

// Testbench for Prob036_vending_machine: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg nickel,
  output reg dime
);

  integer seed;
  integer i, j, k;
  reg [1:0] coins [0:15];

  initial begin
    seed = 286084;
    reset = 1;
    nickel = 0;
    dime = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    // Directed: N N N | D N | N D | D D | N N D | D D then a coin while vending.
    // coins[i] = {dime, nickel}
    coins[0] = 2'b01; coins[1] = 2'b01; coins[2] = 2'b01; coins[3] = 2'b00;
    coins[4] = 2'b10; coins[5] = 2'b01; coins[6] = 2'b01; coins[7] = 2'b10;
    coins[8] = 2'b00; coins[9] = 2'b10; coins[10] = 2'b10; coins[11] = 2'b01;
    coins[12] = 2'b01; coins[13] = 2'b10; coins[14] = 2'b10; coins[15] = 2'b10;
    for (i = 0; i < 16; i = i + 1) begin
      {dime, nickel} <= coins[i];
      @(negedge clk);
    end
    {dime, nickel} <= 2'b00;
    repeat (3) @(negedge clk);
    // Vend with change, and reset asserted during the vending cycle.
    dime <= 1'b1;
    @(negedge clk);
    @(negedge clk) begin dime <= 1'b0; reset <= 1'b1; end
    @(negedge clk) reset <= 1'b0;
    repeat (500) @(negedge clk) begin
      k = $random(seed) & 3;
      nickel <= (k == 1);
      dime <= (k == 2);
      reset <= (($random(seed) & 63) == 0);
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire nickel;
  wire dime;
  wire vend_ref;
  wire vend_dut;
  wire change_ref;
  wire change_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_vend = 0;
  integer errortime_vend = 0;
  integer errors_change = 0;
  integer errortime_change = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .nickel(nickel),
    .dime(dime)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .nickel(nickel),
    .dime(dime),
    .vend(vend_ref),
    .change(change_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .nickel(nickel),
    .dime(dime),
    .vend(vend_dut),
    .change(change_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_vend = (vend_ref === (vend_ref ^ vend_dut ^ vend_ref));
  wire match_change = (change_ref === (change_ref ^ change_dut ^ change_ref));
  wire match_all = match_vend && match_change;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_vend) begin
        if (errors_vend == 0) errortime_vend = $time;
        errors_vend = errors_vend + 1;
      end
      if (!match_change) begin
        if (errors_change == 0) errortime_change = $time;
        errors_change = errors_change + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_vend != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "vend", errors_vend, errortime_vend);
    else
      $display("Hint: Output '%s' has no mismatches.", "vend");
    if (errors_change != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "change", errors_change, errortime_change);
    else
      $display("Hint: Output '%s' has no mismatches.", "change");
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
