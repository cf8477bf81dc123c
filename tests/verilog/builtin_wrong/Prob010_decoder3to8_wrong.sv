// Deliberately wrong: enable ignored
module TopModule (
  input en,
  input [2:0] sel,
  output [7:0] out
);

  assign out = 8'd1 << sel;

endmodule
