// Deliberately wrong: accepts a push while full when a pop happens at the same edge
module TopModule (
  input clk,
  input reset,
  input push,
  input pop,
  input [7:0] din,
  output [7:0] dout,
  output full,
  output empty,
  output [2:0] count
);

  reg [7:0] mem [0:3];
  reg [1:0] rp, wp;
  reg [2:0] cnt;
  wire do_push = push && ((cnt != 3'd4) || pop);
  wire do_pop = pop && (cnt != 3'd0);

  always @(posedge clk)
    if (reset) begin
      rp <= 2'd0;
      wp <= 2'd0;
      cnt <= 3'd0;
    end else begin
      if (do_push) begin
        mem[wp] <= din;
        wp <= wp + 2'd1;
      end
      if (do_pop) rp <= rp + 2'd1;
      if (do_push && !do_pop) cnt <= cnt + 3'd1;
      else if (do_pop && !do_push) cnt <= cnt - 3'd1;
    end

  assign count = cnt;
  assign empty = (cnt == 3'd0);
  assign full = (cnt == 3'd4);
  assign dout = (cnt == 3'd0) ? 8'h00 : mem[rp];

endmodule
