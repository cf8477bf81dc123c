// Deliberately wrong: right rotation implemented as a logical shift
module TopModule (
  input [7:0] data,
  input [2:0] amt,
  input dir,
  output [7:0] out
);

  assign out = dir ? (data >> amt) : ((data << amt) | (data >> (4'd8 - amt)));

endmodule
