// The micro-op loop nest of GEMM and ALU: for i < loop_out, j < loop_in, u in [begin, end),
// one iteration per step, with each operand's index offset i*factor_out + j*factor_in
// maintained by additions. Operands: A (acc / dst), B (inp / src), C (wgt). Each offset wraps
// at its width; its *_ov_o flag says the true offset reached 2^width (the sums only grow, so the
// flag stays set for the rest of the row or nest that carried), for the range check after it.
module vacc_uop_loop #(
  parameter int unsigned AW = 8,
  parameter int unsigned BW = 8,
  parameter int unsigned CW = 8
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic start_i,
  input  logic [vacc_pkg::UopIdxW-1:0] begin_i,
  input  logic [vacc_pkg::UopIdxW:0]   end_i,
  input  logic [13:0] loop_out_i,
  input  logic [13:0] loop_in_i,
  input  logic [AW-1:0] a_out_i, a_in_i,
  input  logic [BW-1:0] b_out_i, b_in_i,
  input  logic [CW-1:0] c_out_i, c_in_i,
  input  logic step_i,
  output logic valid_o,  // an iteration is available (consumed by step_i)
  output logic done_o,   // pulses the cycle after the last iteration was consumed (after
                         // start_i for an empty nest): for the simulator's trace
  output logic [vacc_pkg::UopIdxW-1:0] uop_o,
  output logic [AW-1:0] a_o,
  output logic [BW-1:0] b_o,
  output logic [CW-1:0] c_o,
  output logic a_ov_o,
  output logic b_ov_o,
  output logic c_ov_o
);
  localparam int unsigned UW = vacc_pkg::UopIdxW;
  logic active_d, active_q, done_d, done_q;
  logic [UW:0] u_d, u_q, begin_d, begin_q, end_d, end_q;
  logic [13:0] i_d, i_q, j_d, j_q, lo_d, lo_q, li_d, li_q;
  logic [AW-1:0] a_d, a_q, ar_d, ar_q, afo_d, afo_q, afi_d, afi_q;
  logic [BW-1:0] b_d, b_q, br_d, br_q, bfo_d, bfo_q, bfi_d, bfi_q;
  logic [CW-1:0] c_d, c_q, cr_d, cr_q, cfo_d, cfo_q, cfi_d, cfi_q;
  // Overflow of each offset (a, b, c) and of its row start (ar, br, cr).
  logic [2:0] ov_d, ov_q, ovr_d, ovr_q;
  logic [AW:0] a_in_sum, a_out_sum;
  logic [BW:0] b_in_sum, b_out_sum;
  logic [CW:0] c_in_sum, c_out_sum;
  assign a_in_sum = {1'b0, a_q} + {1'b0, afi_q};
  assign a_out_sum = {1'b0, ar_q} + {1'b0, afo_q};
  assign b_in_sum = {1'b0, b_q} + {1'b0, bfi_q};
  assign b_out_sum = {1'b0, br_q} + {1'b0, bfo_q};
  assign c_in_sum = {1'b0, c_q} + {1'b0, cfi_q};
  assign c_out_sum = {1'b0, cr_q} + {1'b0, cfo_q};

  always_comb begin
    active_d = active_q;
    u_d = u_q; begin_d = begin_q; end_d = end_q;
    i_d = i_q; j_d = j_q; lo_d = lo_q; li_d = li_q;
    a_d = a_q; ar_d = ar_q; afo_d = afo_q; afi_d = afi_q;
    b_d = b_q; br_d = br_q; bfo_d = bfo_q; bfi_d = bfi_q;
    c_d = c_q; cr_d = cr_q; cfo_d = cfo_q; cfi_d = cfi_q;
    ov_d = ov_q; ovr_d = ovr_q;
    if (start_i) begin
      active_d = ({1'b0, begin_i} < end_i) && (loop_out_i != '0) && (loop_in_i != '0);
      u_d = {1'b0, begin_i}; begin_d = {1'b0, begin_i}; end_d = end_i;
      i_d = '0; j_d = '0; lo_d = loop_out_i; li_d = loop_in_i;
      a_d = '0; ar_d = '0; afo_d = a_out_i; afi_d = a_in_i;
      b_d = '0; br_d = '0; bfo_d = b_out_i; bfi_d = b_in_i;
      c_d = '0; cr_d = '0; cfo_d = c_out_i; cfi_d = c_in_i;
      ov_d = '0; ovr_d = '0;
    end else if (step_i && active_q) begin
      if (u_q + 1'b1 < end_q) begin
        u_d = u_q + 1'b1;
      end else begin
        u_d = begin_q;
        if (j_q + 14'd1 < li_q) begin
          j_d = j_q + 14'd1;
          a_d = a_in_sum[AW-1:0];
          b_d = b_in_sum[BW-1:0];
          c_d = c_in_sum[CW-1:0];
          ov_d = ov_q | {c_in_sum[CW], b_in_sum[BW], a_in_sum[AW]};
        end else begin
          j_d = '0;
          if (i_q + 14'd1 < lo_q) begin
            i_d = i_q + 14'd1;
            ar_d = a_out_sum[AW-1:0]; a_d = a_out_sum[AW-1:0];
            br_d = b_out_sum[BW-1:0]; b_d = b_out_sum[BW-1:0];
            cr_d = c_out_sum[CW-1:0]; c_d = c_out_sum[CW-1:0];
            ovr_d = ovr_q | {c_out_sum[CW], b_out_sum[BW], a_out_sum[AW]};
            ov_d = ovr_d;
          end else begin
            active_d = 1'b0;
          end
        end
      end
    end
    if (clr_i) active_d = 1'b0;
    done_d = (start_i || active_q) && !active_d && !clr_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      done_q <= 1'b0;
      u_q <= '0; begin_q <= '0; end_q <= '0;
      i_q <= '0; j_q <= '0; lo_q <= '0; li_q <= '0;
      a_q <= '0; ar_q <= '0; afo_q <= '0; afi_q <= '0;
      b_q <= '0; br_q <= '0; bfo_q <= '0; bfi_q <= '0;
      c_q <= '0; cr_q <= '0; cfo_q <= '0; cfi_q <= '0;
      ov_q <= '0; ovr_q <= '0;
    end else begin
      active_q <= active_d;
      done_q <= done_d;
      u_q <= u_d; begin_q <= begin_d; end_q <= end_d;
      i_q <= i_d; j_q <= j_d; lo_q <= lo_d; li_q <= li_d;
      a_q <= a_d; ar_q <= ar_d; afo_q <= afo_d; afi_q <= afi_d;
      b_q <= b_d; br_q <= br_d; bfo_q <= bfo_d; bfi_q <= bfi_d;
      c_q <= c_d; cr_q <= cr_d; cfo_q <= cfo_d; cfi_q <= cfi_d;
      ov_q <= ov_d; ovr_q <= ovr_d;
    end
  end

  assign valid_o = active_q;
  assign done_o = done_q;
  assign uop_o = u_q[UW-1:0];
  assign a_o = a_q;
  assign b_o = b_q;
  assign c_o = c_q;
  assign a_ov_o = ov_q[0];
  assign b_ov_o = ov_q[1];
  assign c_ov_o = ov_q[2];

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      UopLoopNoStartWhileActive: assert (!(start_i && active_q))
        else $error("%m: loop restarted while iterating");
    end
  end
`endif
endmodule
