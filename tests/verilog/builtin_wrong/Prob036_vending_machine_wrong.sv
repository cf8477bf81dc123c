// Deliberately wrong: coins inserted during a vending cycle are swallowed
module TopModule (
  input clk,
  input reset,
  input nickel,
  input dime,
  output vend,
  output change
);

  localparam S0 = 3'd0, S5 = 3'd1, S10 = 3'd2, V15 = 3'd3, V20 = 3'd4;
  reg [2:0] state, next;
  reg [1:0] credit;
  reg [2:0] total;

  always @(*) begin
    case (state)
      S5:      credit = 2'd1;
      S10:     credit = 2'd2;
      default: credit = 2'd0;
    endcase
    total = credit + (nickel ? 3'd1 : dime ? 3'd2 : 3'd0);
    if (state == V15 || state == V20) next = S0;
    else case (total)
      3'd0:    next = S0;
      3'd1:    next = S5;
      3'd2:    next = S10;
      3'd3:    next = V15;
      default: next = V20;
    endcase
  end

  always @(posedge clk)
    if (reset) state <= S0;
    else state <= next;

  assign vend = (state == V15) || (state == V20);
  assign change = (state == V20);

endmodule
