// Deliberately wrong: borrow taken from the sign bit of the difference
module TopModule (
  input [7:0] a,
  input [7:0] b,
  output [7:0] diff,
  output borrow
);

  assign diff = a - b;
  assign borrow = diff[7];

endmodule
