// Deliberately wrong: inputs c and d swapped
module TopModule (
  input [1:0] sel,
  input [3:0] a,
  input [3:0] b,
  input [3:0] c,
  input [3:0] d,
  output [3:0] out
);

  reg [3:0] out_r;
  assign out = out_r;

  always @(*) begin
    case (sel)
      2'b00: out_r = a;
      2'b01: out_r = b;
      2'b10: out_r = d;
      default: out_r = c;
    endcase
  end

endmodule
