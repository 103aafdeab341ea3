// Two signed products that share an operand, a*b_hi and a*b_lo, from one multiplier of a
// DSP48E1's size (25 x 18): (b_hi * 2^P + b_lo) * a = a*b_hi * 2^P + a*b_lo, where P = ABits +
// BBits holds one product. The low P bits of the packed product are a*b_lo exactly; the P bits
// above them are a*b_hi minus the borrow that a negative a*b_lo takes from them, so the
// unpacking adds bit P-1 (the low product's sign) back: the sign correction of the upper
// product. One registered stage, like the multiplier register of a DSP.
//
// The packed operand is built without an adder across its width: its low P bits are b_lo
// sign-extended, its high bits b_hi minus that extension's borrow (b_lo's sign), which gives
// b_hi * 2^P + b_lo as a signed (P + BBits + 1)-bit value: 25 bits for int8, the DSP48E1's A
// port. tests/hw/mul2_packed_test.cc checks every (a, b_hi, b_lo) of int8.
module vacc_mul2_packed #(
  parameter int unsigned ABits = 8,  // the shared operand (the DSP's 18-bit B port)
  parameter int unsigned BBits = 8   // the two packed operands (its 25-bit A port)
) (
  input  logic                     clk_i,
  input  logic                     en_i,       // register the operands' products
  input  logic [ABits-1:0]         a_i,
  input  logic [BBits-1:0]         b_hi_i,
  input  logic [BBits-1:0]         b_lo_i,
  output logic [ABits+BBits-1:0]   prod_hi_o,  // a*b_hi, the cycle after en_i
  output logic [ABits+BBits-1:0]   prod_lo_o   // a*b_lo, the cycle after en_i
);
  localparam int unsigned ProdBits = ABits + BBits;
  localparam int unsigned PackedBits = ProdBits + BBits + 1;

  logic [BBits:0] b_hi_adj;
  logic [PackedBits-1:0] packed_op;
  // Two products wide: the bit above (the packed product's sign) is never needed.
  logic [2*ProdBits-1:0] prod_q;

  assign b_hi_adj = {b_hi_i[BBits-1], b_hi_i} - (BBits + 1)'(b_lo_i[BBits-1]);
  assign packed_op = {b_hi_adj, {(ProdBits - BBits){b_lo_i[BBits-1]}}, b_lo_i};

  // Computed under its enable inside the process (an exception to the _d/_q rule, as in
  // vacc_gemm_core): a simulator then skips the multiplier in cycles without operands. No
  // reset: the caller's valid bits qualify the data.
  always_ff @(posedge clk_i) begin
    if (en_i) prod_q <= (2 * ProdBits)'($signed(packed_op) * $signed(a_i));
  end

  assign prod_lo_o = prod_q[ProdBits-1:0];
  assign prod_hi_o = prod_q[2*ProdBits-1:ProdBits] + ProdBits'(prod_q[ProdBits-1]);
endmodule
