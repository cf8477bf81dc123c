// Deliberately wrong: only one flip-flop (one cycle of latency)
module TopModule (
  input clk,
  input areset,
  input in,
  output out
);

  reg s1;
  assign out = s1;

  always @(posedge clk or posedge areset)
    if (areset) s1 <= 1'b0;
    else s1 <= in;

endmodule
