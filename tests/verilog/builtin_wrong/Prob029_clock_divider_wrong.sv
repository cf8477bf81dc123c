// Deliberately wrong: divides by 4 (toggles every second edge)
module TopModule (
  input clk,
  input reset,
  output clk_out
);

  reg cnt;
  reg out_r;
  assign clk_out = out_r;

  always @(posedge clk)
    if (reset) begin
      cnt <= 1'b0;
      out_r <= 1'b0;
    end else if (cnt == 1'b1) begin
      cnt <= 1'b0;
      out_r <= ~out_r;
    end else begin
      cnt <= 1'b1;
    end

endmodule
