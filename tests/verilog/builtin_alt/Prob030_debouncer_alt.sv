// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  input in,
  output reg out
);
  reg [2:0] run;  // consecutive edges with in != out, including this one
  always @(posedge clk) begin
    if (reset) begin
      out <= 1'b0;
      run <= 3'd0;
    end else if (in != out) begin
      if (run + 3'd1 == 3'd4) begin
        out <= in;
        run <= 3'd0;
      end else
        run <= run + 3'd1;
    end else
      run <= 3'd0;
  end
endmodule
