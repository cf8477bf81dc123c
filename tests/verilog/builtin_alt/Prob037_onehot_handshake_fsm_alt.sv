// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  input start,
  input ack,
  output reg [3:0] state,
  output req
);
  reg [2:0] waited;
  reg [3:0] next;
  always @(*) begin
    next = 4'b0000;
    case (1'b1)
      state[0]: next = start ? 4'b0010 : 4'b0001;
      state[1]: next = 4'b0100;
      state[2]: next = ack ? 4'b1000 : (waited == 3'd3 ? 4'b0001 : 4'b0100);
      state[3]: next = 4'b0001;
      default:  next = 4'b0001;
    endcase
  end
  always @(posedge clk) begin
    if (reset) begin
      state <= 4'b0001;
      waited <= 0;
    end else begin
      state <= next;
      waited <= (state[2] && next[2]) ? waited + 1'b1 : 3'd0;
    end
  end
  assign req = state[1] | state[2];
endmodule
