// The compute engine: executes LOAD UOP, LOAD ACC, GEMM, ALU and FINISH in order. It owns the
// UOP scratchpad and the ACC scratchpad. GEMM and ALU run on two units, each with its own
// micro-op loop and its own copy of UOP, side by side when the program allows it
// (isa/README.md, "Overlap"). ACC is two banks, its lower and upper half (bank = top index
// bit), each with one read and one write port, so the two units can work on different halves
// in the same cycle; a second pair of banks, written together with the first, is read by the
// store engine, so storing never steals a compute cycle.
//
// Dispatch: a GEMM (ALU) is handed to its unit once that unit's loop is free and the other
// unit has no work left on the banks it may touch: both without the overlap flag, else the
// bank of its first micro-op's dst (the program promises to stay there; the unit's idle UOP
// port reads that micro-op the cycle before). Each unit tracks the banks of the work it still
// has, so everything that shares a bank keeps program order. A handed-off instruction leaves
// the queue at once, so the next one can go to the other unit. One that pushes a token leaves
// once the work the token vouches for is done: for the load engine all earlier compute work
// (both units drained), for the store engine its own unit's and the other unit's work on its
// banks. LOAD UOP, LOAD ACC and FINISH wait for both units to drain.
//
// GEMM unit, one micro-op per cycle:
//   P0 loop nest issues (i, j, u), reads UOP[u]
//   P1 indices = micro-op + offsets; read INP and WGT
//   P2 products (vacc_gemm_core stage 1)
//   P3 adder tree (stage 2); read ACC[dst]
//   P4 ACC[dst] = reset ? 0 : (assign ? 0 : ACC[dst]) + dot; write
// (assign: ExtGemmAssign, config extensions.gemm_assign: the product replaces the tile.)
// ALU unit, one micro-op per cycle with an immediate, every second cycle with a vector
// operand (its two ACC reads may hit the same bank port):
//   P0 read UOP; P1 read ACC[src] (not with an immediate); P2 read ACC[dst];
//   P3 write op(dst, src or imm).
// With ExtAluHold (config extensions.alu_hold), an ALU with a vector operand, one micro-op and
// both src factors 0 (every iteration reads the same src: a requantization's bias or shifts)
// reads src for its first micro-op only; its other micro-ops read no src, issue every cycle and
// take src from the micro-op ahead of them (P3's operand register, with that micro-op's write
// forwarded when it rewrites the held index).
// Per bank, a read whose address was written in the previous cycle takes the written value
// (forwarding), so back-to-back micro-ops on the same ACC tile (a reduction) see each other's
// results. Consecutive GEMMs (or consecutive ALUs) stream through their unit without draining
// it. Two units never meet on a bank unless a flagged instruction leaves its bank (fsim checks
// the promise; the assertions below catch it here); should it happen, the GEMM unit gets the
// port.
//
// Range check: in P1 each micro-op's indices (micro-op field + loop offset, without wrapping)
// are compared with the scratchpads' depths, as fsim checks an instruction's reach. One beyond
// raises range_o with the program index of its instruction (range_idx_o): the run halts (no
// instruction starts after it) while the offending instruction completes with its indices
// wrapped, so every index stays inside its array.
module vacc_compute (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic halt_i,
  input  logic [63:0] base_i,
  // Instruction queue: its head in, the head's pop and start out.
  input  vacc_pkg::insn_head_t q_i,
  input  logic [31:0] insn_idx_i,  // the head's index in the program
  output vacc_pkg::insn_ctl_t q_o,
  // Tokens: prev = load, next = store.
  input  vacc_pkg::tok_state_t tok_i,
  output vacc_pkg::tok_ctrl_t tok_o,
  // AXI read clients: UOP and ACC.
  output vacc_pkg::rd_req_t uop_rd_o,
  input  vacc_pkg::rd_rsp_t uop_rd_i,
  output vacc_pkg::rd_req_t acc_rd_o,
  input  vacc_pkg::rd_rsp_t acc_rd_i,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i,
  // INP and WGT scratchpad read ports: requests out, data in (the cycle after).
  output vacc_pkg::inp_sram_rd_t inp_sram_o,
  input  logic [vacc_pkg::InpElemBits-1:0] inp_rdata_i,
  output vacc_pkg::wgt_sram_rd_t wgt_sram_o,
  input  logic [vacc_pkg::WgtElemBits-1:0] wgt_rdata_i,
  // The store engine's ACC read port: its request in, data out.
  input  vacc_pkg::acc_sram_rd_t st_i,
  output logic [vacc_pkg::AccElemBits-1:0] st_rdata_o,
  // Status.
  output logic finish_o,     // FINISH has executed in this run
  output logic gemm_busy_o,  // a micro-op enters the GEMM core this cycle
  output logic gemm_mac_o,   // ... and it accumulates (its GEMM has no reset flag)
  // busy: an instruction executes or a unit still works; stall: the head waits for a token or
  // room to push one, units drained.
  output vacc_pkg::engine_status_t status_o,
  output logic range_o,              // pulse: a micro-op's index lies beyond its scratchpad
  output logic [31:0] range_idx_o,   // ... of the instruction at this program index
  // Per-unit trace for the simulator: an instruction is handed to the unit / its last
  // micro-op is written back (an instruction without micro-ops ends a few cycles after it
  // starts, in order with the unit's other instructions).
  output logic gemm_insn_start_o,
  output logic gemm_insn_end_o,
  output logic alu_insn_start_o,
  output logic alu_insn_end_o
);
  // The queue's head and the store engine's ACC read request, unpacked once.
  logic insn_valid, insn_pop, st_re;
  logic [vacc_pkg::InsnBits-1:0] insn;
  logic [vacc_pkg::AccIdxW-1:0] st_raddr;
  assign insn_valid = q_i.valid;
  assign insn = q_i.insn;
  assign st_re = st_i.re;
  assign st_raddr = st_i.addr;

  localparam int unsigned AccIdxW = vacc_pkg::AccIdxW;
  localparam int unsigned BankIdxW = AccIdxW - 1;  // an index inside one ACC bank
  localparam int unsigned Top = AccIdxW - 1;       // the bank bit of an ACC index
  localparam int unsigned AccElemBits = vacc_pkg::AccElemBits;
  localparam int unsigned InpIdxW = vacc_pkg::InpIdxW;
  localparam int unsigned WgtIdxW = vacc_pkg::WgtIdxW;
  localparam int unsigned UopIdxW = vacc_pkg::UopIdxW;
  localparam int unsigned UopSrcW = vacc_pkg::UopSrcW;
  localparam int unsigned AccBits = vacc_pkg::AccBits;
  localparam int unsigned Lanes = vacc_pkg::Batch * vacc_pkg::BlockOut;

  // ------------------------------------------------------------- decode of the head
  logic [vacc_pkg::OpcodeW-1:0] opcode;
  logic [vacc_pkg::MemIdW-1:0] mem;
  logic head_assign;
  logic head_load, head_gemm, head_alu, head_finish, head_uop, overlap, push_prev, push_next;
  assign opcode = insn[vacc_pkg::LoadOpcodeOff +: vacc_pkg::LoadOpcodeW];
  assign mem = insn[vacc_pkg::LoadMemOff +: vacc_pkg::LoadMemW];
  assign head_load = (opcode == vacc_pkg::OpLoad);
  assign head_uop = head_load && (mem == vacc_pkg::MemUop);
  // A GEMM with assign (ExtGemmAssign) has GEMM's fields under its own opcode.
  assign head_assign = vacc_pkg::ExtGemmAssign != 0 && opcode == vacc_pkg::OpGemmAssign;
  assign head_gemm = (opcode == vacc_pkg::OpGemm) || head_assign;
  assign head_alu = (opcode == vacc_pkg::OpAlu);
  assign head_finish = (opcode == vacc_pkg::OpFinish);
  assign push_prev = insn[vacc_pkg::LoadPushPrevOff];
  assign push_next = insn[vacc_pkg::LoadPushNextOff];
  assign overlap = head_gemm ? insn[vacc_pkg::GemmOverlapOff] : insn[vacc_pkg::AluOverlapOff];

  // ------------------------------------------------------------- the head's ACC banks
  // A flagged GEMM/ALU with micro-ops touches only the bank of its first micro-op's dst (one
  // without micro-ops counts as touching both, as fsim has it). While its unit's loop is free,
  // that unit's UOP copy has an idle read port: read UOP[uop_begin] there ("peek"); the bank
  // is known from the next cycle on, for as long as the head stays.
  logic one_bank, peek_gemm, peek_alu, peek_valid_d, peek_valid_q, head_bank;
  logic [UopIdxW-1:0] head_uop_begin;
  logic [UopIdxW:0] head_uop_end;
  logic [1:0] head_banks;           // the ACC banks the head GEMM/ALU may touch
  logic [1:0] gemm_work, alu_work;  // the ACC banks each unit still has work on
  logic gemm_loop_valid, alu_loop_valid, gemm_drained, alu_drained;
  // Each unit's UOP copy's read data. A micro-op element is 32 or 64 bits wide; the bits above
  // dst+src+wgt are padding (and the ALU has no use for wgt).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [vacc_pkg::UopElemBits-1:0] gemm_uop, alu_uop;
  /* verilator lint_on UNUSEDSIGNAL */

  assign head_uop_begin = head_gemm ?
      UopIdxW'(insn[vacc_pkg::GemmUopBeginOff +: vacc_pkg::GemmUopBeginW]) :
      UopIdxW'(insn[vacc_pkg::AluUopBeginOff +: vacc_pkg::AluUopBeginW]);
  assign head_uop_end = head_gemm ?
      (UopIdxW + 1)'(insn[vacc_pkg::GemmUopEndOff +: vacc_pkg::GemmUopEndW]) :
      (UopIdxW + 1)'(insn[vacc_pkg::AluUopEndOff +: vacc_pkg::AluUopEndW]);
  assign one_bank = overlap && ({1'b0, head_uop_begin} < head_uop_end);
  assign peek_gemm = insn_valid && head_gemm && one_bank && !gemm_loop_valid;
  assign peek_alu = insn_valid && head_alu && one_bank && !alu_loop_valid;
  assign peek_valid_d = (peek_gemm || peek_alu) && !insn_pop && !clr_i;
  assign head_bank = head_gemm ? gemm_uop[vacc_pkg::UopDstOff + Top]
                               : alu_uop[vacc_pkg::UopDstOff + Top];
  assign head_banks = !one_bank ? 2'b11 : head_bank ? 2'b10 : 2'b01;

  // ------------------------------------------------------------- sequencing
  logic start, exec_done, can_start, uop_ld_busy, acc_ld_busy;
  vacc_pkg::engine_status_t seq_status;
  /* verilator lint_off UNUSEDSIGNAL */
  vacc_pkg::tok_ctrl_t seq_tok;  // its pushes are always 0: the sequencer is given none
  /* verilator lint_on UNUSEDSIGNAL */
  logic finish_d, finish_q;
  logic [1:0] gemm_banks_q, alu_banks_q;  // the banks of the instruction in each unit

  logic pend_full, pend_empty;
  always_comb begin
    // A GEMM/ALU leaves the queue once handed to its unit; its tokens wait in the pending-push
    // queue below, so an instruction that pushes never holds back the next one.
    if (head_gemm) begin
      can_start = !gemm_loop_valid && (!one_bank || peek_valid_q) &&
                  ((alu_work & head_banks) == '0) && (!(push_prev || push_next) || !pend_full);
    end else if (head_alu) begin
      can_start = !alu_loop_valid && (!one_bank || peek_valid_q) &&
                  ((gemm_work & head_banks) == '0) && (!(push_prev || push_next) || !pend_full);
    end else begin
      can_start = gemm_drained && alu_drained;
    end
    if (head_load) exec_done = !uop_ld_busy && !acc_ld_busy && !pend_full;
    else if (head_finish) exec_done = !pend_full;
    else exec_done = 1'b1;
  end

  vacc_dep_seq u_seq (
    .clk_i, .rst_ni, .clr_i, .halt_i,
    .valid_i(insn_valid),
    .pop_prev_i(insn[vacc_pkg::LoadPopPrevOff]),
    .pop_next_i(insn[vacc_pkg::LoadPopNextOff]),
    .push_prev_i(1'b0),  // compute pushes go through the pending-push queue
    .push_next_i(1'b0),
    .can_start_i(can_start),
    .tok_i, .tok_o(seq_tok),
    .start_o(start), .exec_done_i(exec_done), .retire_o(insn_pop),
    .status_o(seq_status)
  );
  assign tok_o.pop_prev = seq_tok.pop_prev;
  assign tok_o.pop_next = seq_tok.pop_next;
  assign q_o.pop = insn_pop;
  assign q_o.start = start;

  // A handed-off GEMM/ALU is no longer the sequencer's: the units keep the engine busy, and a
  // head waiting for a token meanwhile counts as busy, not stalled (the two stay exclusive).
  assign status_o.busy = seq_status.busy || !gemm_drained || !alu_drained || !pend_empty;
  assign status_o.stall = seq_status.stall && gemm_drained && alu_drained && pend_empty;
  assign status_o.quiet = seq_status.quiet && gemm_drained && alu_drained && pend_empty;
  assign status_o.idle = seq_status.idle && gemm_drained && alu_drained && pend_empty;

  // ------------------------------------------------------------- pending pushes
  // Tokens of handed-off GEMMs/ALUs (and of LOAD/FINISH, queued at retire behind them) wait
  // here until the work they vouch for has ended (isa/README.md, "Overlap"), one queue per
  // token queue so each keeps program order and neither holds back the other: a token to the
  // load engine (q = 0) once every compute instruction up to the pusher has ended; a token to
  // the store engine (q = 1) once its own unit's have, and the other unit's before it have or
  // that unit has no work left on the pusher's banks. Ends are counted per unit; an entry
  // holds the counts it needs.
  localparam int unsigned PendDepth = 8;
  localparam int unsigned PendW = 3;
  localparam int unsigned CntW = 16;
  logic [CntW-1:0] gemm_issued_q, gemm_ended_q, alu_issued_q, alu_ended_q;
  // Entry e of queue q at index q*PendDepth + e.
  logic p_alu_q [2*PendDepth];       // the pusher's unit (LOAD/FINISH: needs already met)
  logic [1:0] p_banks_q [2*PendDepth];
  logic [CntW-1:0] p_gemm_need_q [2*PendDepth];
  logic [CntW-1:0] p_alu_need_q [2*PendDepth];
  logic [PendW:0] p_at [2];          // the head entry of each queue, and where each enqueues
  logic [PendW:0] p_in [2];
  logic [PendW-1:0] p_head_q [2];
  logic [PendW-1:0] p_tail_q [2];
  logic [PendW:0] p_count_q [2];
  logic [1:0] want, enq, deq, full, gemm_reached, alu_reached;
  logic handoff, queued_at_retire;

  // ended >= need, on counters that wrap (far fewer than 2^15 instructions are in flight).
  function automatic logic reached(input logic [CntW-1:0] ended, input logic [CntW-1:0] need);
    logic [CntW-1:0] d;
    d = ended - need;
    reached = ~d[CntW-1];
  endfunction

  assign want = {push_next, push_prev};
  assign handoff = start && (head_gemm || head_alu);
  assign queued_at_retire = insn_pop && !head_gemm && !head_alu;
  always_comb begin
    for (int q = 0; q < 2; q++) begin
      p_at[q] = {q[0], p_head_q[q]};
      p_in[q] = {q[0], p_tail_q[q]};
      full[q] = p_count_q[q] == (PendW + 1)'(PendDepth);
      enq[q] = want[q] && (handoff || queued_at_retire);
      gemm_reached[q] = reached(gemm_ended_q, p_gemm_need_q[p_at[q]]);
      alu_reached[q] = reached(alu_ended_q, p_alu_need_q[p_at[q]]);
    end
    deq[0] = p_count_q[0] != '0 && gemm_reached[0] && alu_reached[0] && !tok_i.prev_full;
    deq[1] = p_count_q[1] != '0 && !tok_i.next_full &&
             (p_alu_q[p_at[1]] ?
                  alu_reached[1] && (gemm_reached[1] ||
                                     (gemm_work & p_banks_q[p_at[1]]) == '0) :
                  gemm_reached[1] && (alu_reached[1] ||
                                      (alu_work & p_banks_q[p_at[1]]) == '0));
  end
  assign pend_full = |(want & full);
  assign pend_empty = p_count_q[0] == '0 && p_count_q[1] == '0;
  assign tok_o.push_prev = deq[0];
  assign tok_o.push_next = deq[1];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      gemm_issued_q <= '0;
      gemm_ended_q <= '0;
      alu_issued_q <= '0;
      alu_ended_q <= '0;
      for (int q = 0; q < 2; q++) begin
        p_head_q[q] <= '0;
        p_tail_q[q] <= '0;
        p_count_q[q] <= '0;
      end
    end else if (clr_i) begin
      gemm_issued_q <= '0;
      gemm_ended_q <= '0;
      alu_issued_q <= '0;
      alu_ended_q <= '0;
      for (int q = 0; q < 2; q++) begin
        p_head_q[q] <= '0;
        p_tail_q[q] <= '0;
        p_count_q[q] <= '0;
      end
    end else begin
      if (start && head_gemm) gemm_issued_q <= gemm_issued_q + 1'b1;
      if (start && head_alu) alu_issued_q <= alu_issued_q + 1'b1;
      if (g4_done_q) gemm_ended_q <= gemm_ended_q + 1'b1;
      if (a3_done_q) alu_ended_q <= alu_ended_q + 1'b1;
      for (int q = 0; q < 2; q++) begin
        if (enq[q]) p_tail_q[q] <= p_tail_q[q] + 1'b1;
        if (deq[q]) p_head_q[q] <= p_head_q[q] + 1'b1;
        p_count_q[q] <= p_count_q[q] + (PendW + 1)'(enq[q]) - (PendW + 1)'(deq[q]);
      end
    end
  end

  // Entry payload: qualified by the counts above, so no reset.
  always_ff @(posedge clk_i) begin
    for (int q = 0; q < 2; q++) begin
      if (enq[q]) begin
        p_alu_q[p_in[q]] <= head_alu;
        p_banks_q[p_in[q]] <= (head_gemm || head_alu) ? head_banks : 2'b11;
        // The counts after this instruction's own hand-off.
        p_gemm_need_q[p_in[q]] <= gemm_issued_q + CntW'(start && head_gemm);
        p_alu_need_q[p_in[q]] <= alu_issued_q + CntW'(start && head_alu);
      end
    end
  end

  // ------------------------------------------------------------- LOAD UOP / LOAD ACC
  logic uop_we, acc_ld_we;
  logic [UopIdxW-1:0] uop_waddr;
  logic [vacc_pkg::UopElemBits-1:0] uop_wdata;
  logic [AccIdxW-1:0] acc_ld_waddr;
  logic [AccElemBits-1:0] acc_ld_wdata;

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::UopElemBytesLog2), .IdxW(UopIdxW)) u_uop_ld (
    .clk_i, .rst_ni, .clr_i, .start_i(start && head_uop), .insn_i(insn), .base_i,
    .busy_o(uop_ld_busy),
    .rd_o(uop_rd_o), .rd_i(uop_rd_i), .r_data_i,
    .we_o(uop_we), .waddr_o(uop_waddr), .wdata_o(uop_wdata)
  );

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::AccElemBytesLog2), .IdxW(AccIdxW)) u_acc_ld (
    .clk_i, .rst_ni, .clr_i, .start_i(start && head_load && !head_uop), .insn_i(insn), .base_i,
    .busy_o(acc_ld_busy),
    .rd_o(acc_rd_o), .rd_i(acc_rd_i), .r_data_i,
    .we_o(acc_ld_we), .waddr_o(acc_ld_waddr), .wdata_o(acc_ld_wdata)
  );

  // ------------------------------------------------------------- GEMM unit: P0
  logic gemm_start, gemm_step, gemm_loop_done;
  // The GEMM in the unit: its reset operand and the banks it may touch.
  logic gemm_reset_d, gemm_reset_q;
  logic gemm_assign_d, gemm_assign_q;
  logic [1:0] gemm_banks_d;
  logic [UopIdxW-1:0] gemm_loop_uop;
  logic [AccIdxW-1:0] gemm_loop_acc;
  logic [InpIdxW-1:0] gemm_loop_inp;
  logic [WgtIdxW-1:0] gemm_loop_wgt;
  logic gemm_loop_acc_ov, gemm_loop_inp_ov, gemm_loop_wgt_ov;
  logic [31:0] gemm_idx_d, gemm_idx_q;  // the program index of the GEMM in the unit
  assign gemm_start = start && head_gemm;
  assign gemm_idx_d = gemm_start ? insn_idx_i : gemm_idx_q;
  assign gemm_reset_d = gemm_start ? insn[vacc_pkg::GemmResetOff] : gemm_reset_q;
  assign gemm_assign_d = gemm_start ? head_assign : gemm_assign_q;
  assign gemm_banks_d = gemm_start ? head_banks : gemm_banks_q;

  vacc_uop_loop #(.AW(AccIdxW), .BW(InpIdxW), .CW(WgtIdxW)) u_gemm_loop (
    .clk_i, .rst_ni, .clr_i,
    .start_i(gemm_start),
    .begin_i(UopIdxW'(insn[vacc_pkg::GemmUopBeginOff +: vacc_pkg::GemmUopBeginW])),
    .end_i((UopIdxW + 1)'(insn[vacc_pkg::GemmUopEndOff +: vacc_pkg::GemmUopEndW])),
    .loop_out_i(14'(insn[vacc_pkg::GemmLoopOutOff +: vacc_pkg::GemmLoopOutW])),
    .loop_in_i(14'(insn[vacc_pkg::GemmLoopInOff +: vacc_pkg::GemmLoopInW])),
    .a_out_i(AccIdxW'(insn[vacc_pkg::GemmAccFactorOutOff +: vacc_pkg::GemmAccFactorOutW])),
    .a_in_i(AccIdxW'(insn[vacc_pkg::GemmAccFactorInOff +: vacc_pkg::GemmAccFactorInW])),
    .b_out_i(InpIdxW'(insn[vacc_pkg::GemmInpFactorOutOff +: vacc_pkg::GemmInpFactorOutW])),
    .b_in_i(InpIdxW'(insn[vacc_pkg::GemmInpFactorInOff +: vacc_pkg::GemmInpFactorInW])),
    .c_out_i(WgtIdxW'(insn[vacc_pkg::GemmWgtFactorOutOff +: vacc_pkg::GemmWgtFactorOutW])),
    .c_in_i(WgtIdxW'(insn[vacc_pkg::GemmWgtFactorInOff +: vacc_pkg::GemmWgtFactorInW])),
    .step_i(gemm_step), .valid_o(gemm_loop_valid), .done_o(gemm_loop_done),
    .uop_o(gemm_loop_uop), .a_o(gemm_loop_acc), .b_o(gemm_loop_inp), .c_o(gemm_loop_wgt),
    .a_ov_o(gemm_loop_acc_ov), .b_ov_o(gemm_loop_inp_ov), .c_ov_o(gemm_loop_wgt_ov)
  );
  assign gemm_step = gemm_loop_valid;

  // ------------------------------------------------------------- GEMM unit: P1
  logic g1_valid_q, g1_reset_q, g1_assign_q;
  logic [1:0] g1_banks_q;
  logic [AccIdxW-1:0] g1_acc_q;
  logic [InpIdxW-1:0] g1_inp_q;
  logic [WgtIdxW-1:0] g1_wgt_q;
  logic g1_acc_ov_q, g1_inp_ov_q, g1_wgt_ov_q;
  logic [31:0] g1_idx_q;

  // Each unit reads its own copy of UOP; LOAD UOP writes both (it runs with both drained).
  vacc_ram #(.Width(vacc_pkg::UopElemBits), .Depth(vacc_pkg::UopDepth)) u_gemm_uop_ram (
    .clk_i, .we_i(uop_we), .waddr_i(uop_waddr), .wdata_i(uop_wdata),
    .re_i(gemm_step || peek_gemm), .raddr_i(gemm_step ? gemm_loop_uop : head_uop_begin),
    .rdata_o(gemm_uop)
  );

  logic [AccIdxW-1:0] gemm_p1_acc;
  assign gemm_p1_acc = AccIdxW'(gemm_uop[vacc_pkg::UopDstOff +: vacc_pkg::UopDstW]) + g1_acc_q;
  assign inp_sram_o.re = g1_valid_q;
  assign inp_sram_o.addr = InpIdxW'(gemm_uop[vacc_pkg::UopSrcOff +: vacc_pkg::UopSrcW]) + g1_inp_q;
  assign wgt_sram_o.re = g1_valid_q;
  assign wgt_sram_o.addr = WgtIdxW'(gemm_uop[vacc_pkg::UopWgtOff +: vacc_pkg::UopWgtW]) + g1_wgt_q;

  // The same sums one bit wider: an index at or beyond the depth (2^width) is out of range.
  logic [AccIdxW:0] gemm_acc_full;
  logic [UopSrcW:0] gemm_inp_full;
  logic [WgtIdxW:0] gemm_wgt_full;
  logic gemm_range;
  assign gemm_acc_full = (AccIdxW + 1)'(gemm_uop[vacc_pkg::UopDstOff +: vacc_pkg::UopDstW]) +
                         (AccIdxW + 1)'(g1_acc_q);
  assign gemm_inp_full = (UopSrcW + 1)'(gemm_uop[vacc_pkg::UopSrcOff +: vacc_pkg::UopSrcW]) +
                         (UopSrcW + 1)'(g1_inp_q);
  assign gemm_wgt_full = (WgtIdxW + 1)'(gemm_uop[vacc_pkg::UopWgtOff +: vacc_pkg::UopWgtW]) +
                         (WgtIdxW + 1)'(g1_wgt_q);
  assign gemm_range = g1_valid_q &&
      (g1_acc_ov_q || gemm_acc_full[AccIdxW] || g1_inp_ov_q ||
       gemm_inp_full >= (UopSrcW + 1)'(vacc_pkg::InpDepth) || g1_wgt_ov_q ||
       gemm_wgt_full[WgtIdxW]);

  // ------------------------------------------------------------- GEMM unit: P2..P4
  logic g2_valid_q, g3_valid_q, g4_valid_q;
  logic g2_reset_q, g3_reset_q, g4_reset_q;
  logic g2_assign_q, g3_assign_q, g4_assign_q;
  logic [1:0] g2_banks_q, g3_banks_q, g4_banks_q;
  logic g2_done_q, g3_done_q, g4_done_q;  // the last micro-op of an instruction (trace)
  logic [AccIdxW-1:0] g2_acc_q, g3_acc_q, g4_acc_q;
  logic [AccElemBits-1:0] dot;

  vacc_gemm_core u_core (
    .clk_i, .rst_ni, .valid_i(g2_valid_q), .inp_i(inp_rdata_i), .wgt_i(wgt_rdata_i),
    .dot_o(dot)
  );

  assign gemm_drained = !gemm_loop_valid && !g1_valid_q && !g2_valid_q && !g3_valid_q &&
                        !g4_valid_q;
  assign gemm_work = (gemm_loop_valid ? gemm_banks_q : 2'b00) | (g1_valid_q ? g1_banks_q : 2'b00) |
                     (g2_valid_q ? g2_banks_q : 2'b00) | (g3_valid_q ? g3_banks_q : 2'b00) |
                     (g4_valid_q ? g4_banks_q : 2'b00);

  // ------------------------------------------------------------- ALU unit: P0
  logic alu_start, alu_step, alu_gap_d, alu_gap_q, alu_loop_done;
  // The ALU instruction in the unit: its operands and the banks it may touch.
  logic alu_use_imm_d, alu_use_imm_q;
  logic [1:0] alu_banks_d;
  logic [vacc_pkg::AluOpW-1:0] alu_op_d, alu_op_q;
  logic [15:0] alu_imm_d, alu_imm_q;
  logic [UopIdxW-1:0] alu_loop_uop;
  logic [AccIdxW-1:0] alu_loop_dst, alu_loop_src;
  // The ALU in the unit holds its vector operand (alu_hold) and has read it (alu_held).
  logic alu_hold_d, alu_hold_q, alu_held_d, alu_held_q;
  logic alu_loop_dst_ov, alu_loop_src_ov;
  logic [31:0] alu_idx_d, alu_idx_q;  // the program index of the ALU in the unit
  assign alu_start = start && head_alu;
  assign alu_idx_d = alu_start ? insn_idx_i : alu_idx_q;

  always_comb begin
    alu_use_imm_d = alu_use_imm_q;
    alu_op_d = alu_op_q;
    alu_imm_d = alu_imm_q;
    alu_banks_d = alu_banks_q;
    alu_hold_d = alu_hold_q;
    alu_held_d = alu_held_q || (alu_step && alu_hold_q);
    if (alu_start) begin
      alu_banks_d = head_banks;
      alu_hold_d = vacc_pkg::ExtAluHold != 0 && !insn[vacc_pkg::AluUseImmOff] &&
                   head_uop_end == {1'b0, head_uop_begin} + 1'b1 &&
                   insn[vacc_pkg::AluSrcFactorOutOff +: vacc_pkg::AluSrcFactorOutW] == '0 &&
                   insn[vacc_pkg::AluSrcFactorInOff +: vacc_pkg::AluSrcFactorInW] == '0;
      alu_held_d = 1'b0;
      alu_use_imm_d = insn[vacc_pkg::AluUseImmOff];
      alu_op_d = insn[vacc_pkg::AluAluOpOff +: vacc_pkg::AluAluOpW];
      alu_imm_d = 16'(insn[vacc_pkg::AluImmOff +: vacc_pkg::AluImmW]);
    end
  end

  vacc_uop_loop #(.AW(AccIdxW), .BW(AccIdxW), .CW(1)) u_alu_loop (
    .clk_i, .rst_ni, .clr_i,
    .start_i(alu_start),
    .begin_i(UopIdxW'(insn[vacc_pkg::AluUopBeginOff +: vacc_pkg::AluUopBeginW])),
    .end_i((UopIdxW + 1)'(insn[vacc_pkg::AluUopEndOff +: vacc_pkg::AluUopEndW])),
    .loop_out_i(14'(insn[vacc_pkg::AluLoopOutOff +: vacc_pkg::AluLoopOutW])),
    .loop_in_i(14'(insn[vacc_pkg::AluLoopInOff +: vacc_pkg::AluLoopInW])),
    .a_out_i(AccIdxW'(insn[vacc_pkg::AluDstFactorOutOff +: vacc_pkg::AluDstFactorOutW])),
    .a_in_i(AccIdxW'(insn[vacc_pkg::AluDstFactorInOff +: vacc_pkg::AluDstFactorInW])),
    .b_out_i(AccIdxW'(insn[vacc_pkg::AluSrcFactorOutOff +: vacc_pkg::AluSrcFactorOutW])),
    .b_in_i(AccIdxW'(insn[vacc_pkg::AluSrcFactorInOff +: vacc_pkg::AluSrcFactorInW])),
    .c_out_i(1'b0), .c_in_i(1'b0),
    .step_i(alu_step), .valid_o(alu_loop_valid), .done_o(alu_loop_done),
    .uop_o(alu_loop_uop), .a_o(alu_loop_dst), .b_o(alu_loop_src), .c_o(),
    .a_ov_o(alu_loop_dst_ov), .b_ov_o(alu_loop_src_ov), .c_ov_o()
  );
  // A micro-op with a vector operand issues only after a cycle without issue: its P1 src read
  // then never meets the P2 dst read of the micro-op before it on one bank port. With an
  // immediate there is no P1 read, so micro-ops issue every cycle (each P2 read follows the
  // P3 write before it by forwarding); so do a holding ALU's micro-ops after its first.
  assign alu_step = alu_loop_valid && (!alu_gap_q || alu_use_imm_q || alu_held_q);
  assign alu_gap_d = alu_step && !clr_i;

  // ------------------------------------------------------------- ALU unit: P1
  logic a1_valid_q, a1_use_imm_q;
  logic [1:0] a1_banks_q;
  logic [AccIdxW-1:0] a1_dst_q, a1_src_q;
  logic [vacc_pkg::AluOpW-1:0] a1_op_q;
  logic [15:0] a1_imm_q;
  logic a1_dst_ov_q, a1_src_ov_q;
  logic a1_rd_src_q;  // reads src at P1
  /* verilator lint_off UNUSEDSIGNAL */  // read only with ExtAluHold
  logic a1_load_hold_q;  // the first micro-op of a holding ALU: its src index is the held one
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] a1_idx_q;

  vacc_ram #(.Width(vacc_pkg::UopElemBits), .Depth(vacc_pkg::UopDepth)) u_alu_uop_ram (
    .clk_i, .we_i(uop_we), .waddr_i(uop_waddr), .wdata_i(uop_wdata),
    .re_i(alu_step || peek_alu), .raddr_i(alu_loop_valid ? alu_loop_uop : head_uop_begin),
    .rdata_o(alu_uop)
  );

  logic [AccIdxW-1:0] alu_p1_dst, alu_p1_src;
  assign alu_p1_dst = AccIdxW'(alu_uop[vacc_pkg::UopDstOff +: vacc_pkg::UopDstW]) + a1_dst_q;
  assign alu_p1_src = AccIdxW'(alu_uop[vacc_pkg::UopSrcOff +: vacc_pkg::UopSrcW]) + a1_src_q;

  // Range check (src too with an immediate, as fsim checks the instruction's reach).
  logic [AccIdxW:0] alu_dst_full;
  logic [UopSrcW:0] alu_src_full;
  logic alu_range;
  assign alu_dst_full = (AccIdxW + 1)'(alu_uop[vacc_pkg::UopDstOff +: vacc_pkg::UopDstW]) +
                        (AccIdxW + 1)'(a1_dst_q);
  assign alu_src_full = (UopSrcW + 1)'(alu_uop[vacc_pkg::UopSrcOff +: vacc_pkg::UopSrcW]) +
                        (UopSrcW + 1)'(a1_src_q);
  assign alu_range = a1_valid_q &&
      (a1_dst_ov_q || alu_dst_full[AccIdxW] || a1_src_ov_q ||
       alu_src_full >= (UopSrcW + 1)'(vacc_pkg::AccDepth));

  // The earlier instruction in program order when both units find one in the same cycle.
  assign range_o = gemm_range || alu_range;
  assign range_idx_o = (gemm_range && (!alu_range || g1_idx_q < a1_idx_q)) ? g1_idx_q : a1_idx_q;

  // ------------------------------------------------------------- ALU unit: P2..P3
  logic a2_valid_q, a3_valid_q, a2_done_q, a3_done_q;
  logic [1:0] a2_banks_q, a3_banks_q;
  logic a2_src_bank_q;  // the bank its P1 read src from
  /* verilator lint_off UNUSEDSIGNAL */  // read only with ExtAluHold
  logic a2_held_q;  // takes src from the held operand
  /* verilator lint_on UNUSEDSIGNAL */
  logic [AccIdxW-1:0] a2_dst_q, a3_dst_q;
  logic [AccElemBits-1:0] a3_src_q;
  logic [vacc_pkg::AluOpW-1:0] a2_op_q, a3_op_q;
  logic a2_use_imm_q, a3_use_imm_q;
  logic [15:0] a2_imm_q, a3_imm_q;

  assign alu_drained = !alu_loop_valid && !a1_valid_q && !a2_valid_q && !a3_valid_q;
  assign alu_work = (alu_loop_valid ? alu_banks_q : 2'b00) | (a1_valid_q ? a1_banks_q : 2'b00) |
                    (a2_valid_q ? a2_banks_q : 2'b00) | (a3_valid_q ? a3_banks_q : 2'b00);

  // The ALU's one ACC read this cycle: dst in P2 or src in P1 (never both: see alu_step).
  logic alu_rd;
  logic [AccIdxW-1:0] alu_raddr;
  assign alu_rd = a2_valid_q || (a1_valid_q && a1_rd_src_q);
  assign alu_raddr = a2_valid_q ? a2_dst_q : alu_p1_src;

  // ------------------------------------------------------------- ACC: two banks
  logic [2*AccElemBits-1:0] bank_rdata;     // per bank: the read of the last cycle, forwarded
  logic [2*AccElemBits-1:0] st_bank_rdata;  // per bank: the store engine's read
  logic [AccElemBits-1:0] gemm_result, alu_y;

  for (genvar b = 0; b < 2; b++) begin : g_bank
    logic gemm_rd_here, alu_rd_here, ld_wr_here, gemm_wr_here, alu_wr_here;
    logic re, we, fwd_valid_q;
    logic [BankIdxW-1:0] raddr, raddr_q, waddr, fwd_addr_q;
    logic [AccElemBits-1:0] wdata, rdata_ram, fwd_data_q;

    assign gemm_rd_here = g3_valid_q && (g3_acc_q[Top] == 1'(b));
    assign alu_rd_here = alu_rd && (alu_raddr[Top] == 1'(b));
    assign ld_wr_here = acc_ld_we && (acc_ld_waddr[Top] == 1'(b));
    assign gemm_wr_here = g4_valid_q && (g4_acc_q[Top] == 1'(b));
    assign alu_wr_here = a3_valid_q && (a3_dst_q[Top] == 1'(b));

    // GEMM first on both ports: a fixed winner should a flagged instruction leave its bank.
    always_comb begin
      re = 1'b1;
      if (gemm_rd_here) raddr = BankIdxW'(g3_acc_q);
      else if (alu_rd_here) raddr = BankIdxW'(alu_raddr);
      else begin
        raddr = raddr_q;
        re = 1'b0;
      end
      // LOAD ACC runs only while both units are drained, so it never meets them.
      we = ld_wr_here || gemm_wr_here || alu_wr_here;
      if (ld_wr_here) begin
        waddr = BankIdxW'(acc_ld_waddr);
        wdata = acc_ld_wdata;
      end else if (gemm_wr_here) begin
        waddr = BankIdxW'(g4_acc_q);
        wdata = gemm_result;
      end else begin
        waddr = BankIdxW'(a3_dst_q);
        wdata = alu_y;
      end
    end

    vacc_ram #(.Width(AccElemBits), .Depth(vacc_pkg::AccDepth / 2)) u_acc_ram (
      .clk_i, .we_i(we), .waddr_i(waddr), .wdata_i(wdata),
      .re_i(re), .raddr_i(raddr), .rdata_o(rdata_ram)
    );

    vacc_ram #(.Width(AccElemBits), .Depth(vacc_pkg::AccDepth / 2)) u_acc_store_ram (
      .clk_i, .we_i(we), .waddr_i(waddr), .wdata_i(wdata),
      .re_i(st_re && (st_raddr[Top] == 1'(b))), .raddr_i(BankIdxW'(st_raddr)),
      .rdata_o(st_bank_rdata[b*AccElemBits +: AccElemBits])
    );

    assign bank_rdata[b*AccElemBits +: AccElemBits] =
        (fwd_valid_q && fwd_addr_q == raddr_q) ? fwd_data_q : rdata_ram;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) fwd_valid_q <= 1'b0;
      else fwd_valid_q <= we && !clr_i;
    end

    // Qualified by fwd_valid_q, so no reset.
    always_ff @(posedge clk_i) begin
      raddr_q <= raddr;
      fwd_addr_q <= waddr;
      fwd_data_q <= wdata;
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      if (rst_ni && !clr_i) begin
        ComputeBankOneReader: assert (!(gemm_rd_here && alu_rd_here))
          else $error("%m: two units read ACC bank %0d in one cycle: %s", b,
                      "a flagged instruction left its bank, or the bank order broke");
        ComputeBankOneWriter: assert ($countones({ld_wr_here, gemm_wr_here, alu_wr_here}) <= 1)
          else $error("%m: two units write ACC bank %0d in one cycle: %s", b,
                      "a flagged instruction left its bank, or the bank order broke");
      end
    end
`endif
  end

  // The store read is registered: pick the bank its address had when it was issued.
  logic st_bank_d, st_bank_q;
  assign st_bank_d = st_re ? st_raddr[Top] : st_bank_q;
  assign st_rdata_o = st_bank_q ? st_bank_rdata[AccElemBits +: AccElemBits]
                                : st_bank_rdata[0 +: AccElemBits];

  // The ACC tiles read one cycle ago, each from the bank of its own address.
  logic [AccElemBits-1:0] gemm_acc, alu_dst, alu_src, alu_b, imm_vec, gemm_sum;
  assign gemm_acc = g4_acc_q[Top] ? bank_rdata[AccElemBits +: AccElemBits]
                                  : bank_rdata[0 +: AccElemBits];
  assign alu_dst = a3_dst_q[Top] ? bank_rdata[AccElemBits +: AccElemBits]
                                 : bank_rdata[0 +: AccElemBits];
  assign alu_src = a2_src_bank_q ? bank_rdata[AccElemBits +: AccElemBits]
                                 : bank_rdata[0 +: AccElemBits];

  always_comb begin
    for (int unsigned l = 0; l < Lanes; l++) begin
      gemm_sum[l*AccBits +: AccBits] = (g4_assign_q ? '0 : gemm_acc[l*AccBits +: AccBits]) +
                                       dot[l*AccBits +: AccBits];
      imm_vec[l*AccBits +: AccBits] = AccBits'($signed(a3_imm_q));
    end
  end
  assign gemm_result = g4_reset_q ? '0 : gemm_sum;
  assign alu_b = a3_use_imm_q ? imm_vec : a3_src_q;

  // The held vector operand (ExtAluHold) is a3_src_q itself: a holding ALU's micro-ops follow
  // each other cycle by cycle, so the one in P2 takes the src of the one in P3 (read fresh for
  // the first), with that micro-op's write forwarded when it rewrites the held index: each
  // micro-op sees src as the ones before it left it.
  logic [AccElemBits-1:0] a3_src_d;
  if (vacc_pkg::ExtAluHold != 0) begin : g_hold
    logic [AccIdxW-1:0] hold_idx_q;
    always_comb begin
      a3_src_d = alu_src;
      if (a2_held_q) a3_src_d = (a3_valid_q && a3_dst_q == hold_idx_q) ? alu_y : a3_src_q;
    end
    always_ff @(posedge clk_i) begin
      if (a1_valid_q && a1_load_hold_q) hold_idx_q <= alu_p1_src;
    end
  end else begin : g_no_hold
    assign a3_src_d = alu_src;
  end

  vacc_alu u_alu (.op_i(a3_op_q), .a_i(alu_dst), .b_i(alu_b), .imm_i(a3_imm_q), .y_o(alu_y));

  // ------------------------------------------------------------- registers
  always_comb begin
    finish_d = finish_q;
    if (start && head_finish) finish_d = 1'b1;
    if (clr_i) finish_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      finish_q <= 1'b0;
      gemm_idx_q <= '0;
      alu_idx_q <= '0;
      gemm_reset_q <= 1'b0;
      gemm_assign_q <= 1'b0;
      gemm_banks_q <= 2'b11;
      alu_banks_q <= 2'b11;
      peek_valid_q <= 1'b0;
      alu_use_imm_q <= 1'b0;
      alu_hold_q <= 1'b0;
      alu_held_q <= 1'b0;
      alu_op_q <= '0;
      alu_imm_q <= '0;
      alu_gap_q <= 1'b0;
      g1_valid_q <= 1'b0;
      g2_valid_q <= 1'b0;
      g3_valid_q <= 1'b0;
      g4_valid_q <= 1'b0;
      g2_done_q <= 1'b0;
      g3_done_q <= 1'b0;
      g4_done_q <= 1'b0;
      a1_valid_q <= 1'b0;
      a2_valid_q <= 1'b0;
      a3_valid_q <= 1'b0;
      a2_done_q <= 1'b0;
      a3_done_q <= 1'b0;
      st_bank_q <= 1'b0;
    end else begin
      finish_q <= finish_d;
      gemm_idx_q <= gemm_idx_d;
      alu_idx_q <= alu_idx_d;
      gemm_reset_q <= gemm_reset_d;
      gemm_assign_q <= gemm_assign_d;
      gemm_banks_q <= gemm_banks_d;
      alu_banks_q <= alu_banks_d;
      peek_valid_q <= peek_valid_d;
      alu_use_imm_q <= alu_use_imm_d;
      alu_hold_q <= alu_hold_d;
      alu_held_q <= alu_held_d;
      alu_op_q <= alu_op_d;
      alu_imm_q <= alu_imm_d;
      alu_gap_q <= alu_gap_d;
      g1_valid_q <= gemm_step && !clr_i;
      g2_valid_q <= g1_valid_q && !clr_i;
      g3_valid_q <= g2_valid_q && !clr_i;
      g4_valid_q <= g3_valid_q && !clr_i;
      g2_done_q <= gemm_loop_done && !clr_i;
      g3_done_q <= g2_done_q && !clr_i;
      g4_done_q <= g3_done_q && !clr_i;
      a1_valid_q <= alu_step && !clr_i;
      a2_valid_q <= a1_valid_q && !clr_i;
      a3_valid_q <= a2_valid_q && !clr_i;
      a2_done_q <= alu_loop_done && !clr_i;
      a3_done_q <= a2_done_q && !clr_i;
      st_bank_q <= st_bank_d;
    end
  end

  // Pipeline payload: qualified by the valid bits above, so no reset.
  always_ff @(posedge clk_i) begin
    g1_acc_q <= gemm_loop_acc;
    g1_inp_q <= gemm_loop_inp;
    g1_wgt_q <= gemm_loop_wgt;
    g1_acc_ov_q <= gemm_loop_acc_ov;
    g1_inp_ov_q <= gemm_loop_inp_ov;
    g1_wgt_ov_q <= gemm_loop_wgt_ov;
    g1_idx_q <= gemm_idx_q;
    g1_reset_q <= gemm_reset_q;
    g1_assign_q <= gemm_assign_q;
    g1_banks_q <= gemm_banks_q;
    g2_acc_q <= gemm_p1_acc;
    g2_reset_q <= g1_reset_q;
    g2_assign_q <= g1_assign_q;
    g2_banks_q <= g1_banks_q;
    g3_acc_q <= g2_acc_q;
    g3_reset_q <= g2_reset_q;
    g3_assign_q <= g2_assign_q;
    g3_banks_q <= g2_banks_q;
    g4_acc_q <= g3_acc_q;
    g4_reset_q <= g3_reset_q;
    g4_assign_q <= g3_assign_q;
    g4_banks_q <= g3_banks_q;
    a1_dst_q <= alu_loop_dst;
    a1_src_q <= alu_loop_src;
    a1_dst_ov_q <= alu_loop_dst_ov;
    a1_src_ov_q <= alu_loop_src_ov;
    a1_idx_q <= alu_idx_q;
    a1_op_q <= alu_op_q;
    a1_use_imm_q <= alu_use_imm_q;
    a1_rd_src_q <= !alu_use_imm_q && !alu_held_q;
    a1_load_hold_q <= alu_hold_q && !alu_held_q;
    a1_imm_q <= alu_imm_q;
    a1_banks_q <= alu_banks_q;
    a2_dst_q <= alu_p1_dst;
    a2_src_bank_q <= alu_p1_src[Top];
    a2_held_q <= a1_valid_q && !a1_use_imm_q && !a1_rd_src_q;
    a2_op_q <= a1_op_q;
    a2_use_imm_q <= a1_use_imm_q;
    a2_imm_q <= a1_imm_q;
    a2_banks_q <= a1_banks_q;
    a3_dst_q <= a2_dst_q;
    a3_src_q <= a3_src_d;
    a3_op_q <= a2_op_q;
    a3_use_imm_q <= a2_use_imm_q;
    a3_imm_q <= a2_imm_q;
    a3_banks_q <= a2_banks_q;
  end

  assign finish_o = finish_q;
  assign gemm_busy_o = gemm_step;
  assign gemm_mac_o = gemm_step && !gemm_reset_q;
  assign gemm_insn_start_o = gemm_start;
  assign gemm_insn_end_o = g4_done_q;
  assign alu_insn_start_o = alu_start;
  assign alu_insn_end_o = a3_done_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      ComputeAluOneRead: assert (!(a1_valid_q && a1_rd_src_q && a2_valid_q))
        else $error("%m: ALU micro-ops in P1 and P2 together: the issue gap is broken");
      ComputeAccLoadAlone: assert (!(acc_ld_we && !(gemm_drained && alu_drained)))
        else $error("%m: LOAD ACC writes while a compute unit works");
      ComputeUopLoadAlone: assert (!(uop_we && !(gemm_drained && alu_drained)))
        else $error("%m: LOAD UOP writes while a compute unit works");
      // Every ACC access inside the banks its instruction may touch (all, without the flag).
      ComputeGemmInItsBank: assert (!(g3_valid_q && !g3_banks_q[g3_acc_q[Top]]))
        else $error("%m: a GEMM with the overlap flag left the ACC bank of its first micro-op");
      ComputeAluInItsBank: assert (!(a2_valid_q && !a2_banks_q[a2_dst_q[Top]]) &&
                                   !(a1_valid_q && !a1_use_imm_q && !a1_banks_q[alu_p1_src[Top]]))
        else $error("%m: an ALU with the overlap flag left the ACC bank of its first micro-op");
    end
  end
`endif
endmodule
