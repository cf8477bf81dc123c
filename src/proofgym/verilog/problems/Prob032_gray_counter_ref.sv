module RefModule (
  input clk,
  input reset,
  input en,
  output [3:0] g
);

  reg [3:0] b;

  always @(posedge clk)
    if (reset) b <= 4'd0;
    else if (en) b <= b + 4'd1;

  assign g = b ^ (b >> 1);

endmodule
