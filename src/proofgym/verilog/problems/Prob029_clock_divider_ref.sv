module RefModule (
  input clk,
  input reset,
  output clk_out
);

  reg [1:0] cnt;
  reg out_r;
  assign clk_out = out_r;

  always @(posedge clk)
    if (reset) begin
      cnt <= 2'd0;
      out_r <= 1'b0;
    end else if (cnt == 2'd2) begin
      cnt <= 2'd0;
      out_r <= ~out_r;
    end else begin
      cnt <= cnt + 2'd1;
    end

endmodule
