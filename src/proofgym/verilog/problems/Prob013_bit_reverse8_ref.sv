module RefModule (
  input [7:0] in,
  output [7:0] out
);

  genvar g;
  generate
    for (g = 0; g < 8; g = g + 1) begin : rev
      assign out[g] = in[7 - g];
    end
  endgenerate

endmodule
