// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  input in,
  output reg rise,
  output reg fall
);
  reg last;
  always @(posedge clk) last <= reset ? 1'b0 : in;
  always @(*) begin
    rise = 1'b0;
    fall = 1'b0;
    if (in != last) begin
      rise = in;
      fall = last;
    end
  end
endmodule
