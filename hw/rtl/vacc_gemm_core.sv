// The MAC array: for each of Batch x BlockOut outputs, the dot product of an input row
// (BlockIn values) with a weight row, Batch*BlockIn*BlockOut multiplies per cycle. Two
// pipeline stages: registered products (a DSP's multiplier register), then a registered adder
// tree. Sums wrap at AccBits like the accumulator they are added to.
//
// With vacc_pkg::GemmDspPacking, two products that share an operand come from one multiplier
// (the packing of vacc_mul2_packed.sv, one DSP48E1 for two int8 products): outputs o and
// o + BlockOut/2 share the input inp[b][c], or, with a single output column, batches b and
// b + Batch/2 share the weight wgt[o][c]. The same two stages, so the pipeline's latency does
// not change.
module vacc_gemm_core (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic valid_i,                            // inp_i / wgt_i hold a micro-op's operands
  input  logic [vacc_pkg::InpElemBits-1:0] inp_i,  // [b][c], row-major from bit 0
  input  logic [vacc_pkg::WgtElemBits-1:0] wgt_i,  // [o][c]
  output logic [vacc_pkg::AccElemBits-1:0] dot_o   // [b][o], two cycles later
);
  localparam int unsigned Batch = vacc_pkg::Batch;
  localparam int unsigned BlockIn = vacc_pkg::BlockIn;
  localparam int unsigned BlockOut = vacc_pkg::BlockOut;
  localparam int unsigned InpBits = vacc_pkg::InpBits;
  localparam int unsigned WgtBits = vacc_pkg::WgtBits;
  localparam int unsigned AccBits = vacc_pkg::AccBits;
  localparam int unsigned ProdBits = InpBits + WgtBits;
  localparam int unsigned NumMacs = Batch * BlockOut * BlockIn;

  logic [Batch*BlockOut*AccBits-1:0] dot_q;
  logic prod_valid_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) prod_valid_q <= 1'b0;
    else prod_valid_q <= valid_i;
  end

  if (vacc_pkg::GemmDspPacking != 0) begin : g_packed
    // Pairs along BlockOut (shared input) where there are two output columns, else along
    // Batch (shared weight); the config's rules guarantee one of them. Pair (b, o, c) packs
    // the products of (b, o) (low) and of (b, o + PairsO) or (b + PairsB, o) (high).
    localparam bit PairOut = BlockOut >= 2;
    localparam int unsigned PairsB = PairOut ? Batch : Batch / 2;
    localparam int unsigned PairsO = PairOut ? BlockOut / 2 : BlockOut;
    localparam int unsigned PairBits = vacc_mul2_packed::PairBits;  // one word per pair
    logic [PairsB*PairsO*BlockIn*PairBits-1:0] pair_q;
    // As in g_unpacked: computed under their enables in one process, no reset, and unpacked
    // only in the adder tree's process, so that a simulator skips both in idle cycles.
    always_ff @(posedge clk_i) begin
      if (valid_i) begin
        for (int unsigned b = 0; b < PairsB; b++) begin
          for (int unsigned o = 0; o < PairsO; o++) begin
            for (int unsigned c = 0; c < BlockIn; c++) begin
              logic [InpBits-1:0] a, b_hi, b_lo;
              if (PairOut) begin  // the shared operand is the input
                a = inp_i[(b * BlockIn + c) * InpBits +: InpBits];
                b_hi = wgt_i[((o + PairsO) * BlockIn + c) * WgtBits +: WgtBits];
                b_lo = wgt_i[(o * BlockIn + c) * WgtBits +: WgtBits];
              end else begin  // the shared operand is the weight
                a = wgt_i[(o * BlockIn + c) * WgtBits +: WgtBits];
                b_hi = inp_i[((b + PairsB) * BlockIn + c) * InpBits +: InpBits];
                b_lo = inp_i[(b * BlockIn + c) * InpBits +: InpBits];
              end
              pair_q[((b * PairsO + o) * BlockIn + c) * PairBits +: PairBits] <= PairBits'(
                  $signed(vacc_mul2_packed::packed_operand(b_hi, b_lo)) * $signed(a));
            end
          end
        end
      end
      // The adder tree in the fabric (the DSPs cannot sum packed products: the low products'
      // sum would carry into the high ones). Yosys builds it as one carry-save tree per output.
      if (prod_valid_q) begin
        for (int unsigned b = 0; b < Batch; b++) begin
          for (int unsigned o = 0; o < BlockOut; o++) begin
            logic [AccBits-1:0] sum;
            sum = '0;
            for (int unsigned c = 0; c < BlockIn; c++) begin
              // The pair holding (b, o) and which half of it.
              logic hi;
              logic [PairBits-1:0] pair;
              logic [ProdBits-1:0] prod;
              hi = PairOut ? (o >= PairsO) : (b >= PairsB);
              pair = pair_q[(((PairOut || !hi ? b : b - PairsB) * PairsO +
                              (PairOut && hi ? o - PairsO : o)) * BlockIn + c) * PairBits +:
                            PairBits];
              prod = hi ? vacc_mul2_packed::high(pair) : vacc_mul2_packed::low(pair);
              sum = sum + AccBits'($signed(prod));
            end
            dot_q[(b * BlockOut + o) * AccBits +: AccBits] <= sum;
          end
        end
      end
    end
  end else begin : g_unpacked
    // Each product register sits in a slot of its own SlotBits (an AccBits word) and the adder
    // tree reads back only its low ProdBits: a cycle-based simulator then moves each product with
    // one plain word access instead of masking 16-bit fields in and out of shared words, and
    // synthesis drops the slot bits nothing reads (and the multiplier's output bits that feed
    // only them), leaving a ProdBits product and ProdBits flip-flops per MAC. Keep the adder
    // tree reading ProdBits: Yosys 0.23's synth_xilinx silently loses the whole MAC array when
    // the register's sign-extension bits are used (tests/hw synth_test catches it).
    localparam int unsigned SlotBits = (AccBits > ProdBits) ? AccBits : ProdBits;
    logic [NumMacs*SlotBits-1:0] prod_q;
    // Datapath registers, computed under their enables inside the process (an exception to the
    // _d/_q rule): a simulator then skips the array entirely in cycles without a micro-op, which
    // is most of the cost of simulating an idle or memory-bound accelerator. No reset: the valid
    // bits in vacc_compute qualify the data.
    always_ff @(posedge clk_i) begin
      if (valid_i) begin
        for (int unsigned b = 0; b < Batch; b++) begin
          for (int unsigned o = 0; o < BlockOut; o++) begin
            for (int unsigned c = 0; c < BlockIn; c++) begin
              prod_q[((b * BlockOut + o) * BlockIn + c) * SlotBits +: SlotBits] <=
                  SlotBits'($signed(inp_i[(b * BlockIn + c) * InpBits +: InpBits]) *
                            $signed(wgt_i[(o * BlockIn + c) * WgtBits +: WgtBits]));
            end
          end
        end
      end
      if (prod_valid_q) begin
        for (int unsigned n = 0; n < Batch * BlockOut; n++) begin
          logic [AccBits-1:0] sum;
          sum = '0;
          for (int unsigned c = 0; c < BlockIn; c++) begin
            sum = sum + AccBits'($signed(prod_q[(n * BlockIn + c) * SlotBits +: ProdBits]));
          end
          dot_q[n*AccBits +: AccBits] <= sum;
        end
      end
    end
  end

  assign dot_o = dot_q;
endmodule
