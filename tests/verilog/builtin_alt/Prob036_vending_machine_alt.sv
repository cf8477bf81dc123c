// An independent correct implementation, written from the spec alone.
module TopModule (
  input clk,
  input reset,
  input nickel,
  input dime,
  output reg vend,
  output reg change
);
  reg [4:0] credit;  // cents
  wire [4:0] total = credit + (nickel ? 5'd5 : 5'd0) + (dime ? 5'd10 : 5'd0);
  always @(posedge clk) begin
    if (reset) begin
      credit <= 0; vend <= 0; change <= 0;
    end else if (total >= 5'd15) begin
      credit <= 0; vend <= 1; change <= (total == 5'd20);
    end else begin
      credit <= total; vend <= 0; change <= 0;
    end
  end
endmodule
