module RefModule (
  input clk,
  input reset,
  output [7:0] q
);

  reg [7:0] q_r;
  assign q = q_r;

  always @(posedge clk)
    if (reset) q_r <= 8'h01;
    else q_r <= {q_r[6:0], q_r[7] ^ q_r[5] ^ q_r[4] ^ q_r[3]};

endmodule
