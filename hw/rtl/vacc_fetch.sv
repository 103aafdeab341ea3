// The fetch unit: reads insn_count 16-byte instructions from base + insn_offset (vacc_dma_rd,
// bursts of up to 8 instructions, several in flight, credited against a 32-entry buffer) and
// dispatches them in program order, one per cycle, to the load, compute or store queue, waiting
// while the target queue is full. An illegal instruction (unknown opcode or ALU op, a memory id
// the engine cannot access, a dependency flag toward a missing engine, padding where none is
// allowed) is not dispatched: fetch reports its index and stops. So is one whose fields reach
// beyond a scratchpad (a LOAD's or STORE's sram_base plus its tiles, a GEMM's or ALU's micro-op
// range), as fsim checks them; the micro-ops' own indices are checked where they are read
// (vacc_compute).
module vacc_fetch (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic go_i,
  input  logic halt_i,
  input  logic [63:0] base_i,
  input  logic [31:0] insn_count_i,
  input  logic [31:0] insn_offset_i,
  // AXI4 read client.
  output vacc_pkg::rd_req_t rd_o,
  input  vacc_pkg::rd_rsp_t rd_i,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i,
  // Engine queues: 0 load, 1 compute, 2 store.
  output logic [2:0] q_push_o,
  output logic [vacc_pkg::InsnBits-1:0] q_data_o,
  input  logic [2:0] q_full_i,
  // Status.
  output logic illegal_o,  // pulse: the instruction at illegal_idx_o is illegal
  output logic [31:0] illegal_idx_o,  // ... and of range_o; also the index of q_data_o
  output logic range_o,    // pulse: the instruction at illegal_idx_o reaches beyond a scratchpad
  output logic done_o,     // every instruction was dispatched
  output logic quiet_o     // no read in flight
);
  localparam int unsigned BufDepth = 32;
  localparam int unsigned MaxBeats =
      (vacc_pkg::BusBytes >= 128) ? 1 : (128 / vacc_pkg::BusBytes);

  logic elem_valid, buf_empty, buf_pop, inflight;
  logic [vacc_pkg::InsnBits-1:0] elem, head;
  logic [$clog2(BufDepth + 1)-1:0] buf_count;
  logic stopped_d, stopped_q;
  logic [31:0] idx_d, idx_q, count_d, count_q;

  vacc_dma_rd #(.ElemBytesLog2(vacc_pkg::InsnBytesLog2), .MaxBeats(MaxBeats)) u_dma (
    .clk_i, .rst_ni, .clr_i, .start_i(go_i),
    .base_i, .elem_i(48'(insn_offset_i) >> vacc_pkg::InsnBytesLog2), .y_size_i(16'd1),
    .x_size_i(insn_count_i), .x_stride_i(32'd0),
    .stop_i(stopped_q || halt_i), .space_i(32'(BufDepth) - 32'(buf_count)),
    .busy_o(), .inflight_o(inflight),
    .elem_valid_o(elem_valid), .elem_o(elem),
    .rd_o, .rd_i, .r_data_i
  );

  vacc_fifo #(.Width(vacc_pkg::InsnBits), .Depth(BufDepth)) u_buf (
    .clk_i, .rst_ni, .clr_i,
    .push_i(elem_valid), .data_i(elem), .full_o(),
    .pop_i(buf_pop), .data_o(head), .empty_o(buf_empty), .count_o(buf_count)
  );

  // Decode of the head instruction: engine and legality.
  logic [vacc_pkg::OpcodeW-1:0] opcode;
  logic [vacc_pkg::MemIdW-1:0] mem;
  logic [vacc_pkg::AluOpW-1:0] alu_op;
  logic pop_prev, pop_next, push_prev, push_next, padded, legal;
  logic [1:0] target;

  assign opcode = head[vacc_pkg::LoadOpcodeOff +: vacc_pkg::LoadOpcodeW];
  assign mem = head[vacc_pkg::LoadMemOff +: vacc_pkg::LoadMemW];
  assign alu_op = head[vacc_pkg::AluAluOpOff +: vacc_pkg::AluAluOpW];
  assign pop_prev = head[vacc_pkg::LoadPopPrevOff];
  assign pop_next = head[vacc_pkg::LoadPopNextOff];
  assign push_prev = head[vacc_pkg::LoadPushPrevOff];
  assign push_next = head[vacc_pkg::LoadPushNextOff];
  assign padded = (head[vacc_pkg::LoadPadTopOff +: vacc_pkg::LoadPadTopW] != '0) ||
                  (head[vacc_pkg::LoadPadBottomOff +: vacc_pkg::LoadPadBottomW] != '0) ||
                  (head[vacc_pkg::LoadPadLeftOff +: vacc_pkg::LoadPadLeftW] != '0) ||
                  (head[vacc_pkg::LoadPadRightOff +: vacc_pkg::LoadPadRightW] != '0);

  always_comb begin
    target = 2'd1;
    legal = 1'b1;
    unique case (opcode)
      vacc_pkg::OpLoad: begin
        if (mem == vacc_pkg::MemInp || mem == vacc_pkg::MemWgt) begin
          target = 2'd0;
          legal = !pop_prev && !push_prev;
        end else if (mem == vacc_pkg::MemUop) begin
          legal = !padded;
        end else if (mem != vacc_pkg::MemAcc) begin
          legal = 1'b0;
        end
      end
      vacc_pkg::OpStore: begin
        target = 2'd2;
        legal = (mem == vacc_pkg::MemOut ||
                 (vacc_pkg::ExtStoreInp != 0 && mem == vacc_pkg::MemInp)) &&
                !pop_next && !push_next && !padded;
      end
      vacc_pkg::OpGemm, vacc_pkg::OpFinish: legal = 1'b1;
      vacc_pkg::OpGemmAssign: legal = vacc_pkg::ExtGemmAssign != 0;
      vacc_pkg::OpAlu:
        legal = (32'(alu_op) < vacc_pkg::NumAluOps) &&
                (alu_op != vacc_pkg::AluClip || vacc_pkg::ExtAluClip != 0) &&
                (alu_op != vacc_pkg::AluShrClip || vacc_pkg::ExtAluShrClip != 0);
      default: legal = 1'b0;
    endcase
  end

  logic active;
  assign active = !buf_empty && !stopped_q && !halt_i;
  assign buf_pop = active && legal && in_range && !q_full_i[target];
  assign q_data_o = head;
  always_comb begin
    q_push_o = '0;
    if (buf_pop) q_push_o[target] = 1'b1;
  end
  // Reach of the head's fields into the scratchpads (fsim's order: begin > end first).
  localparam int unsigned ReachW = 36;
  // rows x cols by shifts and adds: fabric, not one of the DSP48s the GEMM core needs.
  function automatic logic [ReachW-1:0] product(input logic [16:0] a, input logic [16:0] b);
    product = '0;
    for (int unsigned i = 0; i < 17; i++)
      if (b[i]) product = product + (ReachW'(a) << i);
  endfunction
  logic [ReachW-1:0] tiles, reach, depth;
  logic [16:0] rows, cols;
  localparam int unsigned UW = vacc_pkg::UopIdxW + 1;
  logic [UW-1:0] uop_begin, uop_end;
  logic in_range, inp_dst_in_range;
  // STORE INP: its last INP entry, dram_base + (y_size-1)*x_stride + x_size - 1, in INP.
  if (vacc_pkg::ExtStoreInp != 0) begin : g_inp_dst
    logic [16:0] dst_rows, dst_cols;
    logic [ReachW-1:0] dst_reach;
    always_comb begin
      dst_rows = 17'(head[vacc_pkg::StoreYSizeOff +: vacc_pkg::StoreYSizeW]);
      dst_cols = 17'(head[vacc_pkg::StoreXSizeOff +: vacc_pkg::StoreXSizeW]);
      dst_reach = ReachW'(head[vacc_pkg::StoreDramBaseOff +: vacc_pkg::StoreDramBaseW]) +
                  product(dst_rows - 17'd1,
                          17'(head[vacc_pkg::StoreXStrideOff +: vacc_pkg::StoreXStrideW])) +
                  ReachW'(dst_cols);
      inp_dst_in_range = mem != vacc_pkg::MemInp || dst_rows == '0 || dst_cols == '0 ||
                         dst_reach <= ReachW'(vacc_pkg::InpDepth);
    end
  end else begin : g_no_inp_dst
    assign inp_dst_in_range = 1'b1;
  end
  always_comb begin
    rows = 17'(head[vacc_pkg::LoadYSizeOff +: vacc_pkg::LoadYSizeW]);
    cols = 17'(head[vacc_pkg::LoadXSizeOff +: vacc_pkg::LoadXSizeW]);
    if (opcode == vacc_pkg::OpLoad) begin
      rows = rows + 17'(head[vacc_pkg::LoadPadTopOff +: vacc_pkg::LoadPadTopW]) +
             17'(head[vacc_pkg::LoadPadBottomOff +: vacc_pkg::LoadPadBottomW]);
      cols = cols + 17'(head[vacc_pkg::LoadPadLeftOff +: vacc_pkg::LoadPadLeftW]) +
             17'(head[vacc_pkg::LoadPadRightOff +: vacc_pkg::LoadPadRightW]);
    end
    tiles = product(rows, cols);
    reach = ReachW'(head[vacc_pkg::LoadSramBaseOff +: vacc_pkg::LoadSramBaseW]) + tiles;
    if (opcode == vacc_pkg::OpStore) depth = ReachW'(vacc_pkg::AccDepth);  // a STORE reads ACC
    else unique case (mem)
      vacc_pkg::MemUop: depth = ReachW'(vacc_pkg::UopDepth);
      vacc_pkg::MemWgt: depth = ReachW'(vacc_pkg::WgtDepth);
      vacc_pkg::MemInp: depth = ReachW'(vacc_pkg::InpDepth);
      default: depth = ReachW'(vacc_pkg::AccDepth);
    endcase
    if (opcode == vacc_pkg::OpGemm || opcode == vacc_pkg::OpGemmAssign) begin
      uop_begin = UW'(head[vacc_pkg::GemmUopBeginOff +: vacc_pkg::GemmUopBeginW]);
      uop_end = UW'(head[vacc_pkg::GemmUopEndOff +: vacc_pkg::GemmUopEndW]);
    end else begin
      uop_begin = UW'(head[vacc_pkg::AluUopBeginOff +: vacc_pkg::AluUopBeginW]);
      uop_end = UW'(head[vacc_pkg::AluUopEndOff +: vacc_pkg::AluUopEndW]);
    end
    unique case (opcode)
      vacc_pkg::OpLoad: in_range = reach <= depth;
      vacc_pkg::OpStore: in_range = reach <= depth && inp_dst_in_range;
      vacc_pkg::OpGemm, vacc_pkg::OpGemmAssign, vacc_pkg::OpAlu:
        in_range = uop_begin <= uop_end && uop_end <= UW'(vacc_pkg::UopDepth);
      default: in_range = 1'b1;
    endcase
  end

  assign illegal_o = active && !legal;
  assign range_o = active && legal && !in_range;
  assign illegal_idx_o = idx_q;

  always_comb begin
    stopped_d = stopped_q;
    idx_d = idx_q;
    count_d = count_q;
    if (go_i) count_d = insn_count_i;
    if (buf_pop) idx_d = idx_q + 32'd1;
    if (illegal_o || range_o) stopped_d = 1'b1;
    if (clr_i) begin
      stopped_d = 1'b0;
      idx_d = '0;
      count_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      stopped_q <= 1'b0;
      idx_q <= '0;
      count_q <= '0;
    end else begin
      stopped_q <= stopped_d;
      idx_q <= idx_d;
      count_q <= count_d;
    end
  end

  assign done_o = (idx_q == count_q);
  assign quiet_o = !inflight;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      FetchNoPushWhenFull: assert (!(|(q_push_o & q_full_i)))
        else $error("%m: dispatch into a full instruction queue");
      FetchBufferCredit: assert (!(elem_valid && 32'(buf_count) == BufDepth))
        else $error("%m: instruction arrived with a full buffer");
    end
  end
`endif
endmodule
