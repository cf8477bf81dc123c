// Deliberately wrong: odd parity instead of even
module TopModule (
  input [7:0] data,
  output parity
);

  assign parity = ~^data;

endmodule
