// The load engine: executes LOAD INP and LOAD WGT from its instruction queue, filling the INP
// and WGT scratchpads, in step with the compute engine through the load->compute and
// compute->load token queues (it has no previous engine: fetch rejects *_prev flags here).
module vacc_load (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic halt_i,
  input  logic [63:0] base_i,
  // Instruction queue: its head in, the head's pop and start out.
  input  vacc_pkg::insn_head_t q_i,
  output vacc_pkg::insn_ctl_t q_o,
  // Tokens: next = compute. There is no previous engine: fetch rejects *_prev flags here, the
  // top ties that side to 0, and the previous pops and pushes stay 0.
  input  vacc_pkg::tok_state_t tok_i,
  output vacc_pkg::tok_ctrl_t tok_o,
  // AXI read clients: INP and WGT.
  output vacc_pkg::rd_req_t inp_rd_o,
  input  vacc_pkg::rd_rsp_t inp_rd_i,
  output vacc_pkg::rd_req_t wgt_rd_o,
  input  vacc_pkg::rd_rsp_t wgt_rd_i,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i,
  // Scratchpad write ports: enable and address, and the data beside them.
  output vacc_pkg::inp_sram_wr_t inp_sram_o,
  output logic [vacc_pkg::InpElemBits-1:0] inp_wdata_o,
  output vacc_pkg::wgt_sram_wr_t wgt_sram_o,
  output logic [vacc_pkg::WgtElemBits-1:0] wgt_wdata_o,
  // Status.
  output vacc_pkg::engine_status_t status_o
);
  // The queue's head, unpacked once.
  logic insn_valid, insn_pop;
  logic [vacc_pkg::InsnBits-1:0] insn;
  assign insn_valid = q_i.valid;
  assign insn = q_i.insn;
  // The scratchpad write ports' members (assigned at the end).
  logic inp_we, wgt_we;
  logic [vacc_pkg::InpIdxW-1:0] inp_waddr;
  logic [vacc_pkg::WgtIdxW-1:0] wgt_waddr;

  logic start, is_inp, inp_busy, wgt_busy;
  logic [vacc_pkg::MemIdW-1:0] mem;

  assign mem = insn[vacc_pkg::LoadMemOff +: vacc_pkg::LoadMemW];
  assign is_inp = (mem == vacc_pkg::MemInp);

  vacc_dep_seq u_seq (
    .clk_i, .rst_ni, .clr_i, .halt_i,
    .valid_i(insn_valid),
    .pop_prev_i(1'b0),
    .pop_next_i(insn[vacc_pkg::LoadPopNextOff]),
    .push_prev_i(1'b0),
    .push_next_i(insn[vacc_pkg::LoadPushNextOff]),
    .can_start_i(1'b1),
    .tok_i, .tok_o,
    .start_o(start), .exec_done_i(!inp_busy && !wgt_busy), .retire_o(insn_pop),
    .status_o
  );
  assign q_o.pop = insn_pop;
  assign q_o.start = start;

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::InpElemBytesLog2), .IdxW(vacc_pkg::InpIdxW)) u_inp (
    .clk_i, .rst_ni, .clr_i, .start_i(start && is_inp), .insn_i(insn), .base_i, .busy_o(inp_busy),
    .rd_o(inp_rd_o), .rd_i(inp_rd_i), .r_data_i,
    .we_o(inp_we), .waddr_o(inp_waddr), .wdata_o(inp_wdata_o)
  );

  vacc_mem_load #(.ElemBytesLog2(vacc_pkg::WgtElemBytesLog2), .IdxW(vacc_pkg::WgtIdxW)) u_wgt (
    .clk_i, .rst_ni, .clr_i, .start_i(start && !is_inp), .insn_i(insn), .base_i, .busy_o(wgt_busy),
    .rd_o(wgt_rd_o), .rd_i(wgt_rd_i), .r_data_i,
    .we_o(wgt_we), .waddr_o(wgt_waddr), .wdata_o(wgt_wdata_o)
  );

  assign inp_sram_o.we = inp_we;
  assign inp_sram_o.addr = inp_waddr;
  assign wgt_sram_o.we = wgt_we;
  assign wgt_sram_o.addr = wgt_waddr;
endmodule
