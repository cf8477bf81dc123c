module RefModule (
  input clk,
  input reset,
  input in,
  output rise,
  output fall
);

  reg prev;

  always @(posedge clk)
    if (reset) prev <= 1'b0;
    else prev <= in;

  assign rise = in & ~prev;
  assign fall = ~in & prev;

endmodule
