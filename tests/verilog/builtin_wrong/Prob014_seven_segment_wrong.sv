// Deliberately wrong: 6 drawn without segment a and 9 without segment d
module TopModule (
  input [3:0] hex,
  output [6:0] seg
);

  reg [6:0] seg_r;
  assign seg = seg_r;

  always @(*) begin
    case (hex)
      4'h0: seg_r = 7'h3F;
      4'h1: seg_r = 7'h06;
      4'h2: seg_r = 7'h5B;
      4'h3: seg_r = 7'h4F;
      4'h4: seg_r = 7'h66;
      4'h5: seg_r = 7'h6D;
      4'h6: seg_r = 7'h7C;
      4'h7: seg_r = 7'h07;
      4'h8: seg_r = 7'h7F;
      4'h9: seg_r = 7'h67;
      4'hA: seg_r = 7'h77;
      4'hB: seg_r = 7'h7C;
      4'hC: seg_r = 7'h39;
      4'hD: seg_r = 7'h5E;
      4'hE: seg_r = 7'h79;
      default: seg_r = 7'h71;
    endcase
  end

endmodule
