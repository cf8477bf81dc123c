module RefModule (
  input clk,
  input reset,
  input start,
  input ack,
  output [3:0] state,
  output req
);

  localparam IDLE = 4'b0001, REQ = 4'b0010, WAIT = 4'b0100, DONE = 4'b1000;
  reg [3:0] st;
  reg [1:0] k;  // cycles already spent in WAIT

  always @(posedge clk)
    if (reset) begin
      st <= IDLE;
      k <= 2'd0;
    end else begin
      case (st)
        IDLE: if (start) st <= REQ;
        REQ: begin
          st <= WAIT;
          k <= 2'd0;
        end
        WAIT:
          if (ack) st <= DONE;
          else if (k == 2'd3) st <= IDLE;
          else k <= k + 2'd1;
        DONE: st <= IDLE;
        default: st <= IDLE;
      endcase
    end

  assign state = st;
  assign req = st[1] | st[2];

endmodule
