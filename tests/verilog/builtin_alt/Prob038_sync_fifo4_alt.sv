// An independent correct implementation, written from the spec alone:
// entries shift towards slot 0 on a pop.
module TopModule (
  input clk,
  input reset,
  input push,
  input pop,
  input [7:0] din,
  output [7:0] dout,
  output full,
  output empty,
  output reg [2:0] count
);
  reg [7:0] q0, q1, q2, q3;
  wire wr = push && !full;
  wire rd = pop && !empty;
  wire [2:0] n_after_pop = count - (rd ? 3'd1 : 3'd0);
  always @(posedge clk) begin
    if (reset) begin
      count <= 3'd0;
      q0 <= 8'h00;
    end else begin
      if (rd) begin
        q0 <= q1; q1 <= q2; q2 <= q3;
      end
      if (wr) begin
        case (n_after_pop)
          3'd0: q0 <= din;
          3'd1: q1 <= din;
          3'd2: q2 <= din;
          default: q3 <= din;
        endcase
      end
      count <= n_after_pop + (wr ? 3'd1 : 3'd0);
    end
  end
  assign empty = (count == 3'd0);
  assign full = (count == 3'd4);
  assign dout = empty ? 8'h00 : q0;
endmodule
