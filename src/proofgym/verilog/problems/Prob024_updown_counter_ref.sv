module RefModule (
  input clk,
  input reset,
  input en,
  input up,
  output [7:0] count
);

  reg [7:0] c;
  assign count = c;

  always @(posedge clk)
    if (reset) c <= 8'd0;
    else if (en) c <= up ? c + 8'd1 : c - 8'd1;

endmodule
