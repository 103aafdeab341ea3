// The vector ALU: one operation on every element (Batch x BlockOut lanes of AccBits) of an
// ACC tile, combinational. Semantics of isa/README.md: results wrap at AccBits; SHR shifts
// right arithmetically by min(b, AccBits-1) for b >= 0 and left by min(-b, AccBits-1) for b < 0;
// CLIP (extension ExtAluClip) clamps a to [sext(b[7:0]), sext(b[15:8])], max then min;
// SHR_CLIP (extension ExtAluShrClip) clamps SHR's result to the instruction's immediate's
// bounds [sext(imm[7:0]), sext(imm[15:8])]. Where both are on they share one clamp.
module vacc_alu (
  input  logic [vacc_pkg::AluOpW-1:0] op_i,
  input  logic [vacc_pkg::AccElemBits-1:0] a_i,
  input  logic [vacc_pkg::AccElemBits-1:0] b_i,
  /* verilator lint_off UNUSEDSIGNAL */  // read only with ExtAluShrClip
  input  logic [15:0] imm_i,
  /* verilator lint_on UNUSEDSIGNAL */
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
    logic signed [AccBits-1:0] y_shr, y_clamp;
    assign a = $signed(a_i[l*AccBits +: AccBits]);
    assign b = $signed(b_i[l*AccBits +: AccBits]);
    assign neg_b = -{b[AccBits-1], b};
    assign sh_right = ($unsigned(b) > AccBits'(AccBits - 1)) ? ShW'(AccBits - 1) : ShW'(b);
    assign sh_left = (neg_b > (AccBits + 1)'(AccBits - 1)) ? ShW'(AccBits - 1) : ShW'(neg_b);
    assign y_shr = b[AccBits-1] ? (a << sh_left) : (a >>> sh_right);
    if (vacc_pkg::ExtAluClip != 0 || vacc_pkg::ExtAluShrClip != 0) begin : g_clamp
      // CLIP clamps a to b's bounds, SHR_CLIP the shifted a to the immediate's.
      logic shr_sel;
      logic [15:0] bounds;
      logic signed [AccBits-1:0] c, lo, hi;
      assign shr_sel = (vacc_pkg::ExtAluShrClip != 0) &&
                       (vacc_pkg::ExtAluClip == 0 || op_i == vacc_pkg::AluShrClip);
      assign c = shr_sel ? y_shr : a;
      assign bounds = shr_sel ? imm_i : b[15:0];
      assign lo = AccBits'($signed(bounds[7:0]));
      assign hi = AccBits'($signed(bounds[15:8]));
      assign y_clamp = (c < lo) ? ((lo > hi) ? hi : lo) : ((c > hi) ? hi : c);
    end else begin : g_no_clamp
      assign y_clamp = a;
    end
    always_comb begin
      unique case (op_i)
        vacc_pkg::AluMin: y = (a < b) ? a : b;
        vacc_pkg::AluMax: y = (a > b) ? a : b;
        vacc_pkg::AluAdd: y = a + b;
        vacc_pkg::AluShr: y = y_shr;
        vacc_pkg::AluMul: y = AccBits'(a * b);
        vacc_pkg::AluClip: y = y_clamp;
        vacc_pkg::AluShrClip: y = y_clamp;
        default: y = a;
      endcase
    end
    assign y_o[l*AccBits +: AccBits] = y;
  end
endmodule
