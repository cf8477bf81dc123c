// Deliberately wrong: no minimum green time for the main road
module TopModule (
  input clk,
  input reset,
  input car,
  output [2:0] main,
  output [2:0] side
);

  localparam MG = 2'd0, MY = 2'd1, SG = 2'd2, SY = 2'd3;
  reg [1:0] state, next;
  reg [3:0] t;

  always @(*) begin
    case (state)
      MG:      next = car ? MY : MG;
      MY:      next = (t == 4'd1) ? SG : MY;
      SG:      next = (t == 4'd3) ? SY : SG;
      default: next = (t == 4'd1) ? MG : SY;
    endcase
  end

  always @(posedge clk)
    if (reset) begin
      state <= MG;
      t <= 4'd0;
    end else if (next != state) begin
      state <= next;
      t <= 4'd0;
    end else if (t != 4'd15) begin
      t <= t + 4'd1;
    end

  assign main = (state == MG) ? 3'b001 : (state == MY) ? 3'b010 : 3'b100;
  assign side = (state == SG) ? 3'b001 : (state == SY) ? 3'b010 : 3'b100;

endmodule
