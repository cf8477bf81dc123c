// Deliberately wrong: shifts right, serial input enters at the MSB
module TopModule (
  input clk,
  input reset,
  input en,
  input sin,
  output [7:0] q
);

  reg [7:0] q_r;
  assign q = q_r;

  always @(posedge clk)
    if (reset) q_r <= 8'd0;
    else if (en) q_r <= {sin, q_r[7:1]};

endmodule
