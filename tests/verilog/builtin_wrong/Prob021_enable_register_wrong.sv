// Deliberately wrong: reset only takes effect when en is 1
module TopModule (
  input clk,
  input reset,
  input en,
  input [7:0] d,
  output [7:0] q
);

  reg [7:0] q_r;
  assign q = q_r;

  always @(posedge clk)
    if (en) q_r <= reset ? 8'd0 : d;

endmodule
