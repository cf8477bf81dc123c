// Deliberately wrong: counts 0 to 10
module TopModule (
  input clk,
  input reset,
  input ena,
  output [3:0] q
);

  reg [3:0] q_r;
  assign q = q_r;

  always @(posedge clk)
    if (reset) q_r <= 4'd0;
    else if (ena) q_r <= (q_r == 4'd10) ? 4'd0 : q_r + 4'd1;

endmodule
