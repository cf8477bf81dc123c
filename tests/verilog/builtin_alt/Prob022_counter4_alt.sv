// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  output logic [3:0] q
);
  always_ff @(posedge clk)
    q <= reset ? 4'd0 : q + 1'b1;
endmodule
