module RefModule (
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
    else if (en) q_r <= {q_r[6:0], sin};

endmodule
