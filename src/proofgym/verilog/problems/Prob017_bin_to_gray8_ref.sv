module RefModule (
  input [7:0] bin,
  output [7:0] gray
);

  assign gray = bin ^ (bin >> 1);

endmodule
