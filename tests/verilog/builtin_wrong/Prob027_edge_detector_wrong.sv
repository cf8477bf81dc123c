// Deliberately wrong: outputs registered (one cycle late)
module TopModule (
  input clk,
  input reset,
  input in,
  output rise,
  output fall
);

  reg prev, rise_r, fall_r;
  assign rise = rise_r;
  assign fall = fall_r;

  always @(posedge clk)
    if (reset) begin
      prev <= 1'b0; rise_r <= 1'b0; fall_r <= 1'b0;
    end else begin
      prev <= in;
      rise_r <= in & ~prev;
      fall_r <= ~in & prev;
    end

endmodule
