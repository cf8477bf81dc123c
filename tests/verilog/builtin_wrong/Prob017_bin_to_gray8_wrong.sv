// Deliberately wrong: XOR with the left neighbour instead of the right
module TopModule (
  input [7:0] bin,
  output [7:0] gray
);

  assign gray = bin ^ (bin << 1);

endmodule
