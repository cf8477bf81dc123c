module RefModule (
  input [2:0] op,
  input [7:0] a,
  input [7:0] b,
  output [7:0] y,
  output zero,
  output carry
);

  reg [7:0] y_r;
  reg carry_r;
  assign y = y_r;
  assign carry = carry_r;
  assign zero = (y_r == 8'd0);

  always @(*) begin
    carry_r = 1'b0;
    case (op)
      3'b000: {carry_r, y_r} = {1'b0, a} + {1'b0, b};
      3'b001: begin y_r = a - b; carry_r = (a < b); end
      3'b010: y_r = a & b;
      3'b011: y_r = a | b;
      3'b100: y_r = a ^ b;
      3'b101: y_r = ($signed(a) < $signed(b)) ? 8'd1 : 8'd0;
      3'b110: y_r = a << b[2:0];
      default: y_r = a >> b[2:0];
    endcase
  end

endmodule
