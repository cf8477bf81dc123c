module RefModule (
  input [7:0] in,
  output [2:0] pos,
  output valid
);

  reg [2:0] pos_r;
  integer n;
  assign pos = pos_r;
  assign valid = |in;

  always @(*) begin
    pos_r = 3'd0;
    for (n = 0; n < 8; n = n + 1)
      if (in[n]) pos_r = n[2:0];
  end

endmodule
