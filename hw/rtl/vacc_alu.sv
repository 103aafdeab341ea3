// The vector ALU: one operation on every element (Batch x BlockOut lanes of AccBits) of an
// ACC tile, combinational. Semantics of isa/README.md: results wrap at AccBits; SHR shifts
// right arithmetically by min(b, AccBits-1) for b >= 0 and left by min(-b, AccBits-1) for b < 0;
// CLIP (extension ExtAluClip) clamps a to [sext(b[7:0]), sext(b[15:8])], max then min.
module vacc_alu (
  input  logic [vacc_pkg::AluOpW-1:0] op_i,
  input  logic [vacc_pkg::AccElemBits-1:0] a_i,
  input  logic [vacc_pkg::AccElemBits-1:0] b_i,
  output logic [vacc_pkg::AccElemBits-1:0] y_o
);
  localparam int unsigned AccBits = vacc_pkg::AccBits;
  localparam int unsigned Lanes = vacc_pkg::Batch * vacc_pkg::BlockOut;
  localparam int unsigned ShW = $clog2(AccBits);

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [AccBits-1:0] a, b;
    logic [AccBits:0] neg_b;  // -b, one bit wider so that -min fits
    logic [ShW-1:0] sh_right, sh_left;
    logic [AccBits-1:0] y;
    logic signed [AccBits-1:0] y_clip;
    assign a = $signed(a_i[l*AccBits +: AccBits]);
    assign b = $signed(b_i[l*AccBits +: AccBits]);
    assign neg_b = -{b[AccBits-1], b};
    assign sh_right = ($unsigned(b) > AccBits'(AccBits - 1)) ? ShW'(AccBits - 1) : ShW'(b);
    assign sh_left = (neg_b > (AccBits + 1)'(AccBits - 1)) ? ShW'(AccBits - 1) : ShW'(neg_b);
    if (vacc_pkg::ExtAluClip != 0) begin : g_clip
      logic signed [AccBits-1:0] lo, hi;
      assign lo = AccBits'($signed(b[7:0]));
      assign hi = AccBits'($signed(b[15:8]));
      assign y_clip = (a < lo) ? ((lo > hi) ? hi : lo) : ((a > hi) ? hi : a);
    end else begin : g_no_clip
      assign y_clip = a;
    end
    always_comb begin
      unique case (op_i)
        vacc_pkg::AluMin: y = (a < b) ? a : b;
        vacc_pkg::AluMax: y = (a > b) ? a : b;
        vacc_pkg::AluAdd: y = a + b;
        vacc_pkg::AluShr: y = b[AccBits-1] ? (a << sh_left) : (a >>> sh_right);
        vacc_pkg::AluMul: y = AccBits'(a * b);
        vacc_pkg::AluClip: y = y_clip;
        default: y = a;
      endcase
    end
    assign y_o[l*AccBits +: AccBits] = y;
  end
endmodule
