`timescale 1 ps/1 ps

// Testbench for Prob038_sync_fifo4: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg push,
  output reg pop,
  output reg [7:0] din
);

  integer seed;
  integer i, j, k;
  integer p_push, p_pop;

  initial begin
    seed = 301922;
    reset = 1;
    push = 0;
    pop = 0;
    din = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    // Pop while empty, then push five values (the fifth is refused).
    pop <= 1'b1;
    @(negedge clk) pop <= 1'b0;
    for (i = 0; i < 5; i = i + 1) begin
      push <= 1'b1;
      din <= 8'h10 + i;
      @(negedge clk);
    end
    // Push and pop together while full: only the pop is accepted.
    push <= 1'b1; pop <= 1'b1; din <= 8'hEE;
    @(negedge clk);
    // Push and pop together while not full: both accepted.
    din <= 8'hDD;
    @(negedge clk);
    // Drain, with extra pops.
    push <= 1'b0;
    repeat (6) @(negedge clk);
    // Push and pop together while empty: only the push is accepted.
    push <= 1'b1; din <= 8'hCC;
    @(negedge clk);
    push <= 1'b0; pop <= 1'b0;
    @(negedge clk);
    // Random phases with different push/pop rates (out of 8).
    for (j = 0; j < 12; j = j + 1) begin
      case (j % 4)
        0: begin p_push = 7; p_pop = 1; end
        1: begin p_push = 1; p_pop = 7; end
        2: begin p_push = 4; p_pop = 4; end
        default: begin p_push = 6; p_pop = 6; end
      endcase
      repeat (50) @(negedge clk) begin
        push <= (($random(seed) & 7) < p_push);
        pop <= (($random(seed) & 7) < p_pop);
        din <= $random(seed);
        reset <= (($random(seed) & 255) == 0);
      end
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire push;
  wire pop;
  wire [7:0] din;
  wire [7:0] dout_ref;
  wire [7:0] dout_dut;
  wire full_ref;
  wire full_dut;
  wire empty_ref;
  wire empty_dut;
  wire [2:0] count_ref;
  wire [2:0] count_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_dout = 0;
  integer errortime_dout = 0;
  integer errors_full = 0;
  integer errortime_full = 0;
  integer errors_empty = 0;
  integer errortime_empty = 0;
  integer errors_count = 0;
  integer errortime_count = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .push(push),
    .pop(pop),
    .din(din)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .push(push),
    .pop(pop),
    .din(din),
    .dout(dout_ref),
    .full(full_ref),
    .empty(empty_ref),
    .count(count_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .push(push),
    .pop(pop),
    .din(din),
    .dout(dout_dut),
    .full(full_dut),
    .empty(empty_dut),
    .count(count_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_dout = (dout_ref === (dout_ref ^ dout_dut ^ dout_ref));
  wire match_full = (full_ref === (full_ref ^ full_dut ^ full_ref));
  wire match_empty = (empty_ref === (empty_ref ^ empty_dut ^ empty_ref));
  wire match_count = (count_ref === (count_ref ^ count_dut ^ count_ref));
  wire match_all = match_dout && match_full && match_empty && match_count;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_dout) begin
        if (errors_dout == 0) errortime_dout = $time;
        errors_dout = errors_dout + 1;
      end
      if (!match_full) begin
        if (errors_full == 0) errortime_full = $time;
        errors_full = errors_full + 1;
      end
      if (!match_empty) begin
        if (errors_empty == 0) errortime_empty = $time;
        errors_empty = errors_empty + 1;
      end
      if (!match_count) begin
        if (errors_count == 0) errortime_count = $time;
        errors_count = errors_count + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_dout != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "dout", errors_dout, errortime_dout);
    else
      $display("Hint: Output '%s' has no mismatches.", "dout");
    if (errors_full != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "full", errors_full, errortime_full);
    else
      $display("Hint: Output '%s' has no mismatches.", "full");
    if (errors_empty != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "empty", errors_empty, errortime_empty);
    else
      $display("Hint: Output '%s' has no mismatches.", "empty");
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
