// Deliberately wrong: signed instead of unsigned comparison
module TopModule (
  input [3:0] a,
  input [3:0] b,
  output lt,
  output eq,
  output gt
);

  assign lt = ($signed(a) < $signed(b));
  assign eq = (a == b);
  assign gt = ($signed(a) > $signed(b));

endmodule
