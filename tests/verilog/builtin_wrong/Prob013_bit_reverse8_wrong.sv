// Deliberately wrong: swaps the nibbles instead of reversing the bits
module TopModule (
  input [7:0] in,
  output [7:0] out
);

  assign out = {in[3:0], in[7:4]};

endmodule
