// An independent correct implementation, written from the spec alone:
// a history register instead of an explicit state graph.
module TopModule (
  input clk,
  input reset,
  input in,
  output z
);
  reg [3:0] hist;  // the last four bits sampled since reset (zeros before)
  always @(posedge clk)
    if (reset) hist <= 4'b0000;
    else hist <= {hist[2:0], in};
  assign z = (hist == 4'b1011);
endmodule
