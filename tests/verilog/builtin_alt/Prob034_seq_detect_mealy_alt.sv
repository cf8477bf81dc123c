// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input areset,
  input in,
  output z
);
  reg [1:0] hist;   // the last two bits sampled
  reg [1:0] seen;   // how many bits were sampled since reset (saturating at 2)
  always @(posedge clk, posedge areset)
    if (areset) begin
      hist <= 2'b00;
      seen <= 2'd0;
    end else begin
      hist <= {hist[0], in};
      if (seen != 2'd2) seen <= seen + 2'd1;
    end
  assign z = (seen == 2'd2) && (hist == 2'b10) && in;
endmodule
