// An independent correct implementation, written from the spec alone.
module TopModule (
  input [7:0] data,
  input [2:0] amt,
  input dir,
  output reg [7:0] out
);
  integer n;
  always @(*) begin
    for (n = 0; n < 8; n = n + 1)
      if (dir) out[n] = data[(n + amt) % 8];
      else     out[n] = data[(n + 8 - amt) % 8];
  end
endmodule
