// Deliberately wrong: asynchronous instead of synchronous reset
module TopModule (
  input clk,
  input reset,
  input [7:0] d,
  output [7:0] q
);

  reg [7:0] q_r;
  assign q = q_r;

  always @(posedge clk or posedge reset)
    if (reset) q_r <= 8'd0;
    else q_r <= d;

endmodule
