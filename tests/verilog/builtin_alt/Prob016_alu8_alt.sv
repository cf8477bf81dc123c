// An independent correct implementation, written from the spec alone.
module TopModule (
  input [2:0] op,
  input [7:0] a,
  input [7:0] b,
  output logic [7:0] y,
  output logic zero,
  output logic carry
);
  logic [8:0] s;
  always_comb begin
    s = 9'd0;
    carry = 1'b0;
    unique case (op)
      3'd0: begin s = a + b; y = s[7:0]; carry = s[8]; end
      3'd1: begin s = {1'b0, a} - {1'b0, b}; y = s[7:0]; carry = s[8]; end
      3'd2: y = a & b;
      3'd3: y = a | b;
      3'd4: y = a ^ b;
      3'd5: y = {7'd0, (a[7] != b[7]) ? a[7] : (a < b)};
      3'd6: y = a << b[2:0];
      3'd7: y = a >> b[2:0];
    endcase
    zero = ~|y;
  end
endmodule
