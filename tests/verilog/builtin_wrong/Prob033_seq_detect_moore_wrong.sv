// Deliberately wrong: does not detect overlapping occurrences
module TopModule (
  input clk,
  input reset,
  input in,
  output z
);

  localparam S0 = 3'd0, S1 = 3'd1, S10 = 3'd2, S101 = 3'd3, S1011 = 3'd4;
  reg [2:0] state, next;

  always @(*) begin
    case (state)
      S0:      next = in ? S1 : S0;
      S1:      next = in ? S1 : S10;
      S10:     next = in ? S101 : S0;
      S101:    next = in ? S1011 : S10;
      S1011:   next = in ? S1 : S0;
      default: next = S0;
    endcase
  end

  always @(posedge clk)
    if (reset) state <= S0;
    else state <= next;

  assign z = (state == S1011);

endmodule
