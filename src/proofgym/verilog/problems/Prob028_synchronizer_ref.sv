module RefModule (
  input clk,
  input areset,
  input in,
  output out
);

  reg s1, s2;
  assign out = s2;

  always @(posedge clk or posedge areset)
    if (areset) begin
      s1 <= 1'b0;
      s2 <= 1'b0;
    end else begin
      s1 <= in;
      s2 <= s1;
    end

endmodule
