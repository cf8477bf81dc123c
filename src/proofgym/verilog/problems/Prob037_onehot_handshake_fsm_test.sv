`timescale 1 ps/1 ps

// Testbench for Prob037_onehot_handshake_fsm: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg start,
  output reg ack
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 294003;
    reset = 1;
    start = 0;
    ack = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    // start, ack in the second WAIT cycle
    start <= 1'b1;
    @(negedge clk) start <= 1'b0;
    repeat (2) @(negedge clk);
    ack <= 1'b1;
    @(negedge clk) ack <= 1'b0;
    repeat (3) @(negedge clk);
    // start, no ack: timeout
    start <= 1'b1;
    @(negedge clk) start <= 1'b0;
    repeat (8) @(negedge clk);
    // start, ack in the fourth WAIT cycle
    start <= 1'b1;
    @(negedge clk) start <= 1'b0;
    repeat (4) @(negedge clk);
    ack <= 1'b1;
    @(negedge clk) ack <= 1'b0;
    repeat (3) @(negedge clk);
    repeat (600) @(negedge clk) begin
      start <= (($random(seed) & 3) == 0);
      ack <= (($random(seed) & 7) == 0);
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
  wire start;
  wire ack;
  wire [3:0] state_ref;
  wire [3:0] state_dut;
  wire req_ref;
  wire req_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_state = 0;
  integer errortime_state = 0;
  integer errors_req = 0;
  integer errortime_req = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .start(start),
    .ack(ack)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .start(start),
    .ack(ack),
    .state(state_ref),
    .req(req_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .start(start),
    .ack(ack),
    .state(state_dut),
    .req(req_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_state = (state_ref === (state_ref ^ state_dut ^ state_ref));
  wire match_req = (req_ref === (req_ref ^ req_dut ^ req_ref));
  wire match_all = match_state && match_req;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_state) begin
        if (errors_state == 0) errortime_state = $time;
        errors_state = errors_state + 1;
      end
      if (!match_req) begin
        if (errors_req == 0) errortime_req = $time;
        errors_req = errors_req + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_state != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "state", errors_state, errortime_state);
    else
      $display("Hint: Output '%s' has no mismatches.", "state");
    if (errors_req != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "req", errors_req, errortime_req);
    else
      $display("Hint: Output '%s' has no mismatches.", "req");
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
