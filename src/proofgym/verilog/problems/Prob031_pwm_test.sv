`timescale 1 ps/1 ps

// Testbench for Prob031_pwm: RefModule and TopModule see the same stimulus;
// every output is compared 1 ps before each clock edge (both edges), i.e. once per
// half cycle: after each rising edge and after each input change.

module stimulus_gen (
  input clk,
  output reg reset,
  output reg [3:0] duty
);

  integer seed;
  integer i, j, k;

  initial begin
    seed = 246489;
    reset = 1;
    duty = 0;
    #1;
    // Inputs change only just after a falling edge of clk.
    repeat (2) @(negedge clk);
    reset <= 1'b0;
    duty <= 4'd0;
    repeat (40) @(negedge clk);
    duty <= 4'd15;
    repeat (40) @(negedge clk);
    duty <= 4'd1;
    repeat (40) @(negedge clk);
    duty <= 4'd8;
    repeat (40) @(negedge clk);
    reset <= 1'b1;
    @(negedge clk) reset <= 1'b0;
    repeat (12) begin
      duty <= $random(seed);
      j = 20 + ($random(seed) & 31);
      repeat (j) @(negedge clk) reset <= (($random(seed) & 15) == 0);
    end
    @(negedge clk);
    #1 $finish;
  end

endmodule

module tb ();

  reg clk = 1'b0;
  always #5 clk = ~clk;

  wire reset;
  wire [3:0] duty;
  wire pwm_ref;
  wire pwm_dut;

  integer samples = 0;
  integer errors = 0;
  integer errortime = 0;
  integer errors_pwm = 0;
  integer errortime_pwm = 0;

  stimulus_gen stim1 (
    .clk(clk),
    .reset(reset),
    .duty(duty)
  );

  RefModule good1 (
    .clk(clk),
    .reset(reset),
    .duty(duty),
    .pwm(pwm_ref)
  );

  TopModule top_module1 (
    .clk(clk),
    .reset(reset),
    .duty(duty),
    .pwm(pwm_dut)
  );

  // An X in the reference matches anything; an X or Z in the design matches only an X.
  wire match_pwm = (pwm_ref === (pwm_ref ^ pwm_dut ^ pwm_ref));
  wire match_all = match_pwm;

  initial begin
    #4;
    forever begin
      samples = samples + 1;
      if (!match_all) begin
        if (errors == 0) errortime = $time;
        errors = errors + 1;
      end
      if (!match_pwm) begin
        if (errors_pwm == 0) errortime_pwm = $time;
        errors_pwm = errors_pwm + 1;
      end
      #5;
    end
  end

  final begin
    if (errors_pwm != 0)
      $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "pwm", errors_pwm, errortime_pwm);
    else
      $display("Hint: Output '%s' has no mismatches.", "pwm");
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
