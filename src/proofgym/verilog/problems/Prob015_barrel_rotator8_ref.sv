module RefModule (
  input [7:0] data,
  input [2:0] amt,
  input dir,
  output [7:0] out
);

  wire [15:0] left  = {data, data} << amt;
  wire [15:0] right = {data, data} >> amt;
  assign out = dir ? right[7:0] : left[15:8];

endmodule
