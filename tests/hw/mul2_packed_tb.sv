// One packed multiplier as vacc_gemm_core builds each (hw/rtl/vacc_mul2_packed.sv): the packed
// operand, the product registered under its enable (a DSP's multiplier register), the two
// products unpacked. For hw_mul2_packed_test.
module mul2_packed_tb (
  input  logic       clk_i,
  input  logic       en_i,
  input  logic [7:0] a_i,
  input  logic [7:0] b_hi_i,
  input  logic [7:0] b_lo_i,
  output logic [15:0] prod_hi_o,
  output logic [15:0] prod_lo_o
);
  logic [vacc_mul2_packed::PairBits-1:0] pair_q;
  always_ff @(posedge clk_i) begin
    if (en_i)
      pair_q <= vacc_mul2_packed::PairBits'(
          $signed(vacc_mul2_packed::packed_operand(b_hi_i, b_lo_i)) * $signed(a_i));
  end
  assign prod_lo_o = vacc_mul2_packed::low(pair_q);
  assign prod_hi_o = vacc_mul2_packed::high(pair_q);
endmodule
