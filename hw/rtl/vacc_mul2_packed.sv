// Two signed products that share an operand, a*b_hi and a*b_lo, from one multiplier of a
// DSP48E1's size (25 x 18): (b_hi * 2^P + b_lo) * a = a*b_hi * 2^P + a*b_lo, where P = 16
// holds one int8 product. The low P bits of the packed product are a*b_lo exactly; the P bits
// above them are a*b_hi minus the borrow that a negative a*b_lo takes from them, so the
// unpacking adds bit P-1 (the low product's sign) back: the sign correction of the upper
// product.
//
// The packed operand is built without an adder across its width: its low P bits are b_lo
// sign-extended, its high bits b_hi minus that extension's borrow (b_lo's sign), which gives
// b_hi * 2^P + b_lo as a signed 25-bit value, the DSP48E1's A port.
//
// Functions, not a module: vacc_gemm_core keeps each pair's packed product in a word of one
// register array written in one process and unpacks it in its adder tree's process, so that a
// cycle-based simulator moves whole words and skips both in cycles without operands (a module
// per pair made a combinational net of every unpacked product, rebuilt each cycle).
// tests/hw/mul2_packed_test.cc checks every (a, b_hi, b_lo) of int8 through mul2_packed_tb.sv.
package vacc_mul2_packed;
  localparam int unsigned Bits = 8;                          // each operand (the config: int8)
  localparam int unsigned ProdBits = 2 * Bits;               // one product
  localparam int unsigned PackedBits = ProdBits + Bits + 1;  // b_hi * 2^16 + b_lo, signed
  localparam int unsigned PairBits = 2 * ProdBits;           // the packed product's kept bits

  // b_hi * 2^ProdBits + b_lo: multiply it, signed, by the shared operand; keep PairBits bits.
  function automatic logic [PackedBits-1:0] packed_operand(input logic [Bits-1:0] b_hi,
                                                           input logic [Bits-1:0] b_lo);
    logic [Bits:0] b_hi_adj;
    b_hi_adj = {b_hi[Bits-1], b_hi} - (Bits + 1)'(b_lo[Bits-1]);
    packed_operand = {b_hi_adj, {(ProdBits - Bits){b_lo[Bits-1]}}, b_lo};
  endfunction

  // a*b_lo from the packed product (its upper half is the other product's).
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [ProdBits-1:0] low(input logic [PairBits-1:0] pair);
    low = pair[ProdBits-1:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // a*b_hi from the packed product: its upper bits with the low product's borrow added back.
  function automatic logic [ProdBits-1:0] high(input logic [PairBits-1:0] pair);
    high = pair[PairBits-1:ProdBits] + ProdBits'(pair[ProdBits-1]);
  endfunction
endpackage
