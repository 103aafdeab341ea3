// The MAC array: for each of Batch x BlockOut outputs, the dot product of an input row
// (BlockIn values) with a weight row, Batch*BlockIn*BlockOut multiplies per cycle. Two
// pipeline stages: registered products (a DSP's multiplier register), then a registered adder
// tree. Sums wrap at AccBits like the accumulator they are added to.
//
// With vacc_pkg::GemmDspPacking, two products that share an operand come from one multiplier
// (vacc_mul2_packed, one DSP48E1 for two int8 products): outputs o and o + BlockOut/2 share
// the input inp[b][c], or, with a single output column, batches b and b + Batch/2 share the
// weight wgt[o][c]. The same two stages, so the pipeline's latency does not change.
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
    // Batch (shared weight); the config's rules guarantee one of them.
    localparam bit PairOut = BlockOut >= 2;
    localparam int unsigned PairsB = PairOut ? Batch : Batch / 2;
    localparam int unsigned PairsO = PairOut ? BlockOut / 2 : BlockOut;
    // The products, [b][o][c], ProdBits each; the adder tree reads them as they are.
    logic [NumMacs*ProdBits-1:0] prod;

    for (genvar b = 0; b < PairsB; b++) begin : g_b
      for (genvar o = 0; o < PairsO; o++) begin : g_o
        for (genvar c = 0; c < BlockIn; c++) begin : g_c
          // The pair's low product is (b, o), its high one (b, o + PairsO) or (b + PairsB, o).
          localparam int unsigned BHi = PairOut ? b : b + PairsB;
          localparam int unsigned OHi = PairOut ? o + PairsO : o;
          localparam int unsigned Lo = (b * BlockOut + o) * BlockIn + c;
          localparam int unsigned Hi = (BHi * BlockOut + OHi) * BlockIn + c;
          if (PairOut) begin : g_shared_inp
            vacc_mul2_packed #(.ABits(InpBits), .BBits(WgtBits)) u_mul (
              .clk_i, .en_i(valid_i),
              .a_i(inp_i[(b * BlockIn + c) * InpBits +: InpBits]),
              .b_hi_i(wgt_i[(OHi * BlockIn + c) * WgtBits +: WgtBits]),
              .b_lo_i(wgt_i[(o * BlockIn + c) * WgtBits +: WgtBits]),
              .prod_hi_o(prod[Hi*ProdBits +: ProdBits]), .prod_lo_o(prod[Lo*ProdBits +: ProdBits])
            );
          end else begin : g_shared_wgt
            vacc_mul2_packed #(.ABits(WgtBits), .BBits(InpBits)) u_mul (
              .clk_i, .en_i(valid_i),
              .a_i(wgt_i[(o * BlockIn + c) * WgtBits +: WgtBits]),
              .b_hi_i(inp_i[(BHi * BlockIn + c) * InpBits +: InpBits]),
              .b_lo_i(inp_i[(b * BlockIn + c) * InpBits +: InpBits]),
              .prod_hi_o(prod[Hi*ProdBits +: ProdBits]), .prod_lo_o(prod[Lo*ProdBits +: ProdBits])
            );
          end
        end
      end
    end

    // The adder tree in the fabric (the DSPs cannot sum packed products: the low products'
    // sum would carry into the high ones). Yosys builds it as one carry-save tree per output.
    always_ff @(posedge clk_i) begin
      if (prod_valid_q) begin
        for (int unsigned n = 0; n < Batch * BlockOut; n++) begin
          logic [AccBits-1:0] sum;
          sum = '0;
          for (int unsigned c = 0; c < BlockIn; c++) begin
            sum = sum + AccBits'($signed(prod[(n * BlockIn + c) * ProdBits +: ProdBits]));
          end
          dot_q[n*AccBits +: AccBits] <= sum;
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
