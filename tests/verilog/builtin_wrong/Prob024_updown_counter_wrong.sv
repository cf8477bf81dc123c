// Deliberately wrong: saturates at 0 when counting down
module TopModule (
  input clk,
  input reset,
  input en,
  input up,
  output [7:0] count
);

  reg [7:0] c;
  assign count = c;

  always @(posedge clk)
    if (reset) c <= 8'd0;
    else if (en) begin
      if (up) c <= c + 8'd1;
      else if (c != 8'd0) c <= c - 8'd1;
    end

endmodule
