// The MAC array: for each of Batch x BlockOut outputs, the dot product of an input row
// (BlockIn values) with a weight row, Batch*BlockIn*BlockOut multiplies per cycle. Two
// pipeline stages: registered products (a DSP's multiplier register), then a registered adder
// tree. Sums wrap at AccBits like the accumulator they are added to.
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

  // Each product register sits in a slot of its own SlotBits (an AccBits word) and the adder
  // tree reads back only its low ProdBits: a cycle-based simulator then moves each product with
  // one plain word access instead of masking 16-bit fields in and out of shared words, and
  // synthesis drops the slot bits nothing reads (and the multiplier's output bits that feed
  // only them), leaving a ProdBits product and ProdBits flip-flops per MAC. Keep the adder
  // tree reading ProdBits: Yosys 0.23's synth_xilinx silently loses the whole MAC array when
  // the register's sign-extension bits are used (tests/hw synth_test catches it).
  localparam int unsigned SlotBits = (AccBits > ProdBits) ? AccBits : ProdBits;
  logic [NumMacs*SlotBits-1:0] prod_q;
  logic [Batch*BlockOut*AccBits-1:0] dot_q;
  logic prod_valid_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) prod_valid_q <= 1'b0;
    else prod_valid_q <= valid_i;
  end

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

  assign dot_o = dot_q;
endmodule
