module RefModule (
  input clk,
  input areset,
  input in,
  output z
);

  localparam A = 2'd0, B = 2'd1, C = 2'd2;
  reg [1:0] state, next;

  always @(*) begin
    case (state)
      A:       next = in ? B : A;
      B:       next = in ? B : C;
      C:       next = in ? B : A;
      default: next = A;
    endcase
  end

  always @(posedge clk or posedge areset)
    if (areset) state <= A;
    else state <= next;

  assign z = (state == C) && in;

endmodule
