// The compute engine: executes LOAD UOP, LOAD ACC, GEMM, ALU and FINISH in order. It owns the
// UOP scratchpad and the ACC scratchpad (two copies written together: one read by the GEMM /
// ALU pipeline, one by the store engine, so storing never steals a compute cycle).
//
// GEMM pipeline, one micro-op per cycle:
//   P0 loop nest issues (i, j, u), reads UOP[u]
//   P1 indices = micro-op + offsets; read INP and WGT
//   P2 products (vacc_gemm_core stage 1)
//   P3 adder tree (stage 2); read ACC[dst]
//   P4 ACC[dst] = reset ? 0 : ACC[dst] + dot; write
// ALU pipeline, one micro-op every second cycle (the ACC copy has one read port):
//   P0 read UOP; P1 read ACC[src]; P2 read ACC[dst]; P3 write op(dst, src or imm).
// A read whose address was written in the previous cycle takes the written value (forwarding),
// so back-to-back micro-ops on the same ACC tile (a reduction) see each other's results.
// Consecutive GEMMs (or consecutive ALUs) stream through the pipeline without draining it;
// an instruction that pushes a token retires only once its writes are done.
module vacc_compute (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic halt_i,
  input  logic [63:0] base_i,
  // Instruction queue head.
  input  logic insn_valid_i,
  input  logic [vacc_pkg::InsnBits-1:0] insn_i,
  output logic insn_pop_o,
  output logic insn_start_o,  // the head instruction starts executing this cycle
  // Tokens: prev = load, next = store.
  input  logic prev_avail_i,
  input  logic next_avail_i,
  input  logic prev_full_i,
  input  logic next_full_i,
  output logic tok_pop_prev_o,
  output logic tok_pop_next_o,
  output logic tok_push_prev_o,
  output logic tok_push_next_o,
  // AXI read clients: 0 UOP, 1 ACC.
  output logic [1:0]   ar_valid_o,
  input  logic [1:0]   ar_ready_i,
  output logic [127:0] ar_addr_o,
  output logic [15:0]  ar_len_o,
  input  logic [1:0]   r_valid_i,
  output logic [1:0]   r_ready_o,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i,
  // INP and WGT scratchpad read ports.
  output logic inp_re_o,
  output logic [vacc_pkg::InpIdxW-1:0] inp_raddr_o,
  input  logic [vacc_pkg::InpElemBits-1:0] inp_rdata_i,
  output logic wgt_re_o,
  output logic [vacc_pkg::WgtIdxW-1:0] wgt_raddr_o,
  input  logic [vacc_pkg::WgtElemBits-1:0] wgt_rdata_i,
  // The store engine's ACC read port.
  input  logic st_re_i,
  input  logic [vacc_pkg::AccIdxW-1:0] st_raddr_i,
  output logic [vacc_pkg::AccElemBits-1:0] st_rdata_o,
  // Status.
  output logic finish_o,     // FINISH has executed in this run
  output logic gemm_busy_o,  // a micro-op enters the GEMM core this cycle
  output logic gemm_mac_o,   // ... and it accumulates (its GEMM has no reset flag)
  output logic busy_o,
  output logic stall_o,
  output logic quiet_o,
  output logic idle_o
);
  localparam int unsigned AccIdxW = vacc_pkg::AccIdxW;
  localparam int unsigned AccElemBits = vacc_pkg::AccElemBits;
  localparam int unsigned SrcW = vacc_pkg::UopSrcW;
  localparam int unsigned AccBits = vacc_pkg::AccBits;
  localparam int unsigned Lanes = vacc_pkg::Batch * vacc_pkg::BlockOut;

  // ------------------------------------------------------------- decode of the head
  logic [vacc_pkg::OpcodeW-1:0] opcode;
  logic [vacc_pkg::MemIdW-1:0] mem;
  logic head_load, head_gemm, head_alu, head_finish, head_uop, pushes;
  assign opcode = insn_i[vacc_pkg::LoadOpcodeOff +: vacc_pkg::LoadOpcodeW];
  assign mem = insn_i[vacc_pkg::LoadMemOff +: vacc_pkg::LoadMemW];
  assign head_load = (opcode == vacc_pkg::OpLoad);
  assign head_uop = head_load && (mem == vacc_pkg::MemUop);
  assign head_gemm = (opcode == vacc_pkg::OpGemm);
  assign head_alu = (opcode == vacc_pkg::OpAlu);
  assign head_finish = (opcode == vacc_pkg::OpFinish);
  assign pushes = insn_i[vacc_pkg::LoadPushPrevOff] || insn_i[vacc_pkg::LoadPushNextOff];

  // ------------------------------------------------------------- sequencing
  logic start, exec_done, can_start, pipe_empty, uop_ld_busy, acc_ld_busy;
  logic kind_gemm_d, kind_gemm_q;  // the kind of the last GEMM/ALU started
  logic finish_d, finish_q;
  logic loop_valid;

  always_comb begin
    if (head_gemm) can_start = pipe_empty || kind_gemm_q;
    else if (head_alu) can_start = pipe_empty || !kind_gemm_q;
    else can_start = pipe_empty;
    if (head_gemm || head_alu) exec_done = !loop_valid && (pipe_empty || !pushes);
    else if (head_load) exec_done = !uop_ld_busy && !acc_ld_busy;
    else exec_done = 1'b1;
  end

  vacc_dep_seq u_seq (
    .clk_i, .rst_ni, .clr_i, .halt_i,
    .valid_i(insn_valid_i),
    .pop_prev_i(insn_i[vacc_pkg::LoadPopPrevOff]),
    .pop_next_i(insn_i[vacc_pkg::LoadPopNextOff]),
    .push_prev_i(insn_i[vacc_pkg::LoadPushPrevOff]),
    .push_next_i(insn_i[vacc_pkg::LoadPushNextOff]),
    .can_start_i(can_start),
    .prev_avail_i, .next_avail_i, .prev_full_i, .next_full_i,
    .tok_pop_prev_o, .tok_pop_next_o, .tok_push_prev_o, .tok_push_next_o,
    .start_o(start), .exec_done_i(exec_done), .retire_o(insn_pop_o),
    .busy_o, .stall_o, .quiet_o, .idle_o
  );
  assign insn_start_o = start;

  // ------------------------------------------------------------- LOAD UOP / LOAD ACC
  logic uop_we, acc_ld_we;
  logic [vacc_pkg::UopIdxW-1:0] uop_waddr;
  logic [vacc_pkg::UopElemBits-1:0] uop_wdata;
  logic [AccIdxW-1:0] acc_ld_waddr;
  logic [AccElemBits-1:0] acc_ld_wdata;

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::UopElemBytesLog2), .IdxW(vacc_pkg::UopIdxW)) u_uop_ld (
    .clk_i, .rst_ni, .clr_i, .start_i(start && head_uop), .insn_i, .base_i,
    .busy_o(uop_ld_busy),
    .ar_valid_o(ar_valid_o[0]), .ar_ready_i(ar_ready_i[0]), .ar_addr_o(ar_addr_o[63:0]),
    .ar_len_o(ar_len_o[7:0]), .r_valid_i(r_valid_i[0]), .r_ready_o(r_ready_o[0]), .r_data_i,
    .we_o(uop_we), .waddr_o(uop_waddr), .wdata_o(uop_wdata)
  );

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::AccElemBytesLog2), .IdxW(AccIdxW)) u_acc_ld (
    .clk_i, .rst_ni, .clr_i, .start_i(start && head_load && !head_uop), .insn_i, .base_i,
    .busy_o(acc_ld_busy),
    .ar_valid_o(ar_valid_o[1]), .ar_ready_i(ar_ready_i[1]), .ar_addr_o(ar_addr_o[127:64]),
    .ar_len_o(ar_len_o[15:8]), .r_valid_i(r_valid_i[1]), .r_ready_o(r_ready_o[1]), .r_data_i,
    .we_o(acc_ld_we), .waddr_o(acc_ld_waddr), .wdata_o(acc_ld_wdata)
  );

  // ------------------------------------------------------------- loop nest (P0)
  logic step, alu_gap_d, alu_gap_q;
  logic [vacc_pkg::UopIdxW-1:0] loop_uop;
  logic [AccIdxW-1:0] loop_a;
  logic [SrcW-1:0] loop_b;
  logic [vacc_pkg::WgtIdxW-1:0] loop_c;

  // The loop operands of the head instruction: GEMM (acc, inp, wgt) or ALU (dst, src).
  logic [vacc_pkg::UopIdxW-1:0] l_begin;
  logic [vacc_pkg::UopIdxW:0] l_end;
  logic [13:0] l_out, l_in;
  logic [AccIdxW-1:0] l_a_out, l_a_in;
  logic [SrcW-1:0] l_b_out, l_b_in;
  logic [vacc_pkg::WgtIdxW-1:0] l_c_out, l_c_in;
  always_comb begin
    if (head_gemm) begin
      l_begin = vacc_pkg::UopIdxW'(insn_i[vacc_pkg::GemmUopBeginOff +: vacc_pkg::GemmUopBeginW]);
      l_end = (vacc_pkg::UopIdxW + 1)'(insn_i[vacc_pkg::GemmUopEndOff +: vacc_pkg::GemmUopEndW]);
      l_out = 14'(insn_i[vacc_pkg::GemmLoopOutOff +: vacc_pkg::GemmLoopOutW]);
      l_in = 14'(insn_i[vacc_pkg::GemmLoopInOff +: vacc_pkg::GemmLoopInW]);
      l_a_out = AccIdxW'(insn_i[vacc_pkg::GemmAccFactorOutOff +: vacc_pkg::GemmAccFactorOutW]);
      l_a_in = AccIdxW'(insn_i[vacc_pkg::GemmAccFactorInOff +: vacc_pkg::GemmAccFactorInW]);
      l_b_out = SrcW'(insn_i[vacc_pkg::GemmInpFactorOutOff +: vacc_pkg::GemmInpFactorOutW]);
      l_b_in = SrcW'(insn_i[vacc_pkg::GemmInpFactorInOff +: vacc_pkg::GemmInpFactorInW]);
      l_c_out = vacc_pkg::WgtIdxW'(
          insn_i[vacc_pkg::GemmWgtFactorOutOff +: vacc_pkg::GemmWgtFactorOutW]);
      l_c_in = vacc_pkg::WgtIdxW'(
          insn_i[vacc_pkg::GemmWgtFactorInOff +: vacc_pkg::GemmWgtFactorInW]);
    end else begin
      l_begin = vacc_pkg::UopIdxW'(insn_i[vacc_pkg::AluUopBeginOff +: vacc_pkg::AluUopBeginW]);
      l_end = (vacc_pkg::UopIdxW + 1)'(insn_i[vacc_pkg::AluUopEndOff +: vacc_pkg::AluUopEndW]);
      l_out = 14'(insn_i[vacc_pkg::AluLoopOutOff +: vacc_pkg::AluLoopOutW]);
      l_in = 14'(insn_i[vacc_pkg::AluLoopInOff +: vacc_pkg::AluLoopInW]);
      l_a_out = AccIdxW'(insn_i[vacc_pkg::AluDstFactorOutOff +: vacc_pkg::AluDstFactorOutW]);
      l_a_in = AccIdxW'(insn_i[vacc_pkg::AluDstFactorInOff +: vacc_pkg::AluDstFactorInW]);
      l_b_out = SrcW'(insn_i[vacc_pkg::AluSrcFactorOutOff +: vacc_pkg::AluSrcFactorOutW]);
      l_b_in = SrcW'(insn_i[vacc_pkg::AluSrcFactorInOff +: vacc_pkg::AluSrcFactorInW]);
      l_c_out = '0;
      l_c_in = '0;
    end
  end

  vacc_uop_loop #(.AW(AccIdxW), .BW(SrcW), .CW(vacc_pkg::WgtIdxW)) u_loop (
    .clk_i, .rst_ni, .clr_i,
    .start_i(start && (head_gemm || head_alu)),
    .begin_i(l_begin), .end_i(l_end), .loop_out_i(l_out), .loop_in_i(l_in),
    .a_out_i(l_a_out), .a_in_i(l_a_in), .b_out_i(l_b_out), .b_in_i(l_b_in),
    .c_out_i(l_c_out), .c_in_i(l_c_in),
    .step_i(step), .valid_o(loop_valid), .uop_o(loop_uop), .a_o(loop_a), .b_o(loop_b),
    .c_o(loop_c)
  );

  // Per-instruction operands carried down the pipeline with each micro-op.
  logic reset_d, reset_q, use_imm_d, use_imm_q;
  logic [vacc_pkg::AluOpW-1:0] alu_op_d, alu_op_q;
  logic [15:0] imm_d, imm_q;

  always_comb begin
    kind_gemm_d = kind_gemm_q;
    reset_d = reset_q;
    use_imm_d = use_imm_q;
    alu_op_d = alu_op_q;
    imm_d = imm_q;
    finish_d = finish_q;
    if (start && head_gemm) begin
      kind_gemm_d = 1'b1;
      reset_d = insn_i[vacc_pkg::GemmResetOff];
    end
    if (start && head_alu) begin
      kind_gemm_d = 1'b0;
      use_imm_d = insn_i[vacc_pkg::AluUseImmOff];
      alu_op_d = insn_i[vacc_pkg::AluAluOpOff +: vacc_pkg::AluAluOpW];
      imm_d = 16'(insn_i[vacc_pkg::AluImmOff +: vacc_pkg::AluImmW]);
    end
    if (start && head_finish) finish_d = 1'b1;
    if (clr_i) finish_d = 1'b0;
  end

  assign step = loop_valid && (kind_gemm_q || !alu_gap_q);
  assign alu_gap_d = step && !kind_gemm_q && !clr_i;

  // ------------------------------------------------------------- P1
  logic s1_valid_d, s1_valid_q, s1_gemm_d, s1_gemm_q;
  logic [AccIdxW-1:0] s1_a_q;
  logic [SrcW-1:0] s1_b_q;
  logic [vacc_pkg::WgtIdxW-1:0] s1_c_q;
  // A micro-op element is 32 or 64 bits wide; the bits above dst+src+wgt are padding.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [vacc_pkg::UopElemBits-1:0] uop_rdata;
  /* verilator lint_on UNUSEDSIGNAL */

  vacc_ram #(.Width(vacc_pkg::UopElemBits), .Depth(vacc_pkg::UopDepth)) u_uop_ram (
    .clk_i, .we_i(uop_we), .waddr_i(uop_waddr), .wdata_i(uop_wdata),
    .re_i(step), .raddr_i(loop_uop), .rdata_o(uop_rdata)
  );

  logic [AccIdxW-1:0] p1_a;
  logic [SrcW-1:0] p1_b;
  logic [vacc_pkg::WgtIdxW-1:0] p1_c;
  assign p1_a = AccIdxW'(uop_rdata[vacc_pkg::UopDstOff +: vacc_pkg::UopDstW]) + s1_a_q;
  assign p1_b = SrcW'(uop_rdata[vacc_pkg::UopSrcOff +: vacc_pkg::UopSrcW]) + s1_b_q;
  assign p1_c = vacc_pkg::WgtIdxW'(uop_rdata[vacc_pkg::UopWgtOff +: vacc_pkg::UopWgtW]) + s1_c_q;

  assign s1_valid_d = step && !clr_i;
  assign s1_gemm_d = kind_gemm_q;
  assign inp_re_o = s1_valid_q && s1_gemm_q;
  assign inp_raddr_o = vacc_pkg::InpIdxW'(p1_b);
  assign wgt_re_o = s1_valid_q && s1_gemm_q;
  assign wgt_raddr_o = p1_c;

  // ------------------------------------------------------------- GEMM P2..P4
  logic g2_valid_q, g3_valid_q, g4_valid_q;
  logic g2_reset_q, g3_reset_q, g4_reset_q;
  logic [AccIdxW-1:0] g2_a_q, g3_a_q, g4_a_q;
  logic [AccElemBits-1:0] dot;

  vacc_gemm_core u_core (
    .clk_i, .rst_ni, .valid_i(g2_valid_q), .inp_i(inp_rdata_i), .wgt_i(wgt_rdata_i),
    .dot_o(dot)
  );

  // ------------------------------------------------------------- ALU P2..P3
  logic a2_valid_q, a3_valid_q;
  logic [AccIdxW-1:0] a2_a_q, a3_a_q;
  logic [AccElemBits-1:0] a3_src_q;
  logic [vacc_pkg::AluOpW-1:0] a2_op_q, a3_op_q;
  logic a2_use_imm_q, a3_use_imm_q;
  logic [15:0] a2_imm_q, a3_imm_q;

  // ------------------------------------------------------------- ACC (compute copy)
  logic acc_re, acc_we;
  logic [AccIdxW-1:0] acc_raddr, acc_raddr_q, acc_waddr;
  logic [AccElemBits-1:0] acc_wdata, acc_rdata_ram, acc_rdata;
  logic fwd_valid_q;
  logic [AccIdxW-1:0] fwd_addr_q;
  logic [AccElemBits-1:0] fwd_data_q;

  always_comb begin
    acc_re = 1'b1;
    if (g3_valid_q) acc_raddr = g3_a_q;
    else if (a2_valid_q) acc_raddr = a2_a_q;
    else if (s1_valid_q && !s1_gemm_q) acc_raddr = AccIdxW'(p1_b);
    else begin
      acc_raddr = acc_raddr_q;
      acc_re = 1'b0;
    end
  end

  vacc_ram #(.Width(AccElemBits), .Depth(vacc_pkg::AccDepth)) u_acc_ram (
    .clk_i, .we_i(acc_we), .waddr_i(acc_waddr), .wdata_i(acc_wdata),
    .re_i(acc_re), .raddr_i(acc_raddr), .rdata_o(acc_rdata_ram)
  );

  vacc_ram #(.Width(AccElemBits), .Depth(vacc_pkg::AccDepth)) u_acc_store_ram (
    .clk_i, .we_i(acc_we), .waddr_i(acc_waddr), .wdata_i(acc_wdata),
    .re_i(st_re_i), .raddr_i(st_raddr_i), .rdata_o(st_rdata_o)
  );

  assign acc_rdata = (fwd_valid_q && fwd_addr_q == acc_raddr_q) ? fwd_data_q : acc_rdata_ram;

  // Write port: LOAD ACC, GEMM P4 or ALU P3 (never two at once: see can_start).
  logic [AccElemBits-1:0] gemm_sum, alu_b, alu_y, imm_vec;
  always_comb begin
    for (int unsigned l = 0; l < Lanes; l++) begin
      gemm_sum[l*AccBits +: AccBits] = acc_rdata[l*AccBits +: AccBits] + dot[l*AccBits +: AccBits];
      imm_vec[l*AccBits +: AccBits] = AccBits'($signed(a3_imm_q));
    end
  end
  assign alu_b = a3_use_imm_q ? imm_vec : a3_src_q;

  vacc_alu u_alu (.op_i(a3_op_q), .a_i(acc_rdata), .b_i(alu_b), .y_o(alu_y));

  always_comb begin
    acc_we = 1'b0;
    acc_waddr = acc_ld_waddr;
    acc_wdata = acc_ld_wdata;
    if (acc_ld_we) begin
      acc_we = 1'b1;
    end else if (g4_valid_q) begin
      acc_we = 1'b1;
      acc_waddr = g4_a_q;
      acc_wdata = g4_reset_q ? '0 : gemm_sum;
    end else if (a3_valid_q) begin
      acc_we = 1'b1;
      acc_waddr = a3_a_q;
      acc_wdata = alu_y;
    end
  end

  assign pipe_empty = !loop_valid && !s1_valid_q && !g2_valid_q && !g3_valid_q && !g4_valid_q &&
                      !a2_valid_q && !a3_valid_q;

  // ------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      kind_gemm_q <= 1'b1;
      reset_q <= 1'b0;
      use_imm_q <= 1'b0;
      alu_op_q <= '0;
      imm_q <= '0;
      finish_q <= 1'b0;
      alu_gap_q <= 1'b0;
      s1_valid_q <= 1'b0;
      s1_gemm_q <= 1'b0;
      g2_valid_q <= 1'b0;
      g3_valid_q <= 1'b0;
      g4_valid_q <= 1'b0;
      a2_valid_q <= 1'b0;
      a3_valid_q <= 1'b0;
      fwd_valid_q <= 1'b0;
    end else begin
      kind_gemm_q <= kind_gemm_d;
      reset_q <= reset_d;
      use_imm_q <= use_imm_d;
      alu_op_q <= alu_op_d;
      imm_q <= imm_d;
      finish_q <= finish_d;
      alu_gap_q <= alu_gap_d;
      s1_valid_q <= s1_valid_d;
      s1_gemm_q <= s1_gemm_d;
      g2_valid_q <= s1_valid_q && s1_gemm_q && !clr_i;
      g3_valid_q <= g2_valid_q && !clr_i;
      g4_valid_q <= g3_valid_q && !clr_i;
      a2_valid_q <= s1_valid_q && !s1_gemm_q && !clr_i;
      a3_valid_q <= a2_valid_q && !clr_i;
      fwd_valid_q <= acc_we && !clr_i;
    end
  end

  // Pipeline payload: qualified by the valid bits above, so no reset.
  logic s1_reset_q, s1_use_imm_q;
  logic [vacc_pkg::AluOpW-1:0] s1_op_q;
  logic [15:0] s1_imm_q;
  always_ff @(posedge clk_i) begin
    s1_a_q <= loop_a;
    s1_b_q <= loop_b;
    s1_c_q <= loop_c;
    s1_reset_q <= reset_q;
    s1_use_imm_q <= use_imm_q;
    s1_op_q <= alu_op_q;
    s1_imm_q <= imm_q;
    g2_a_q <= p1_a;
    g2_reset_q <= s1_reset_q;
    g3_a_q <= g2_a_q;
    g3_reset_q <= g2_reset_q;
    g4_a_q <= g3_a_q;
    g4_reset_q <= g3_reset_q;
    a2_a_q <= p1_a;
    a2_op_q <= s1_op_q;
    a2_use_imm_q <= s1_use_imm_q;
    a2_imm_q <= s1_imm_q;
    a3_a_q <= a2_a_q;
    a3_op_q <= a2_op_q;
    a3_use_imm_q <= a2_use_imm_q;
    a3_imm_q <= a2_imm_q;
    a3_src_q <= acc_rdata;
    acc_raddr_q <= acc_raddr;
    fwd_addr_q <= acc_waddr;
    fwd_data_q <= acc_wdata;
  end

  assign finish_o = finish_q;
  assign gemm_busy_o = step && kind_gemm_q;
  assign gemm_mac_o = step && kind_gemm_q && !reset_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      ComputeOneAccWriter: assert ($countones({acc_ld_we, g4_valid_q, a3_valid_q}) <= 1)
        else $error("%m: two writers on the ACC write port");
      ComputeOneAccReader: assert ($countones({g3_valid_q, a2_valid_q,
                                               s1_valid_q && !s1_gemm_q}) <= 1)
        else $error("%m: two readers on the ACC read port");
      ComputeNoGemmAluMix: assert (!((g2_valid_q || g3_valid_q || g4_valid_q) &&
                                     (a2_valid_q || a3_valid_q)))
        else $error("%m: GEMM and ALU micro-ops in the pipeline together");
    end
  end
`endif
endmodule
