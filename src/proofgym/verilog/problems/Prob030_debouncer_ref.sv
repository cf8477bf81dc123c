module RefModule (
  input clk,
  input reset,
  input in,
  output out
);

  reg [1:0] cnt;
  reg out_r;
  assign out = out_r;

  always @(posedge clk)
    if (reset) begin
      cnt <= 2'd0;
      out_r <= 1'b0;
    end else if (in == out_r) begin
      cnt <= 2'd0;
    end else if (cnt == 2'd3) begin
      cnt <= 2'd0;
      out_r <= in;
    end else begin
      cnt <= cnt + 2'd1;
    end

endmodule
