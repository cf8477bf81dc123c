// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  input [3:0] duty,
  output pwm
);
  reg [3:0] c = 4'd0;
  always @(posedge clk) c <= reset ? 4'd0 : c + 4'd1;
  assign pwm = (duty > c);
endmodule
