module RefModule (
  input [7:0] in,
  output [3:0] count
);

  reg [3:0] count_r;
  integer n;
  assign count = count_r;

  always @(*) begin
    count_r = 4'd0;
    for (n = 0; n < 8; n = n + 1)
      count_r = count_r + in[n];
  end

endmodule
