module RefModule (
  input clk,
  input reset,
  input [3:0] duty,
  output pwm
);

  reg [3:0] cnt;

  always @(posedge clk)
    if (reset) cnt <= 4'd0;
    else cnt <= cnt + 4'd1;

  assign pwm = (cnt < duty);

endmodule
