// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  output clk_out
);
  reg [2:0] phase;  // 0..5
  always @(posedge clk)
    if (reset || phase == 3'd5) phase <= 3'd0;
    else phase <= phase + 3'd1;
  assign clk_out = (phase >= 3'd3);
endmodule
