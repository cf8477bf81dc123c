// An independent correct implementation, written from the spec alone
// (blocking assignments in the clocked block: the testbench must not race with it).
module TopModule (
  input clk,
  input reset,
  input [7:0] d,
  output reg [7:0] q
);
  always @(posedge clk) begin
    if (reset) q = 8'd0;
    else q = d;
  end
endmodule
