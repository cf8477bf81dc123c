// An independent correct implementation, written from the spec alone:
// a down-counting timer loaded on entry to each state.
module TopModule (
  input clk,
  input reset,
  input car,
  output reg [2:0] main,
  output reg [2:0] side
);
  typedef enum logic [1:0] {MG, MY, SG, SY} st_t;
  st_t st;
  reg [2:0] left;  // cycles still to go before the state may be left (after this one)
  always @(posedge clk) begin
    if (reset) begin
      st <= MG;
      left <= 3'd5;
    end else begin
      case (st)
        MG: if (left != 0) left <= left - 1'b1;
            else if (car) begin st <= MY; left <= 3'd1; end
        MY: if (left != 0) left <= left - 1'b1; else begin st <= SG; left <= 3'd3; end
        SG: if (left != 0) left <= left - 1'b1; else begin st <= SY; left <= 3'd1; end
        SY: if (left != 0) left <= left - 1'b1; else begin st <= MG; left <= 3'd5; end
      endcase
    end
  end
  always @(*) begin
    main = 3'b100;
    side = 3'b100;
    case (st)
      MG: main = 3'b001;
      MY: main = 3'b010;
      SG: side = 3'b001;
      SY: side = 3'b010;
    endcase
  end
endmodule
