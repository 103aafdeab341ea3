// The store engine: executes STORE OUT. It reads y_size*x_size consecutive ACC tiles from
// sram_base (through its own copy of the ACC scratchpad), narrows every lane to OutBits by
// truncation, and writes row y to DRAM elements dram_base + y*x_stride + x with INCR bursts
// that never cross a 4 KiB page. Elements narrower than the bus are packed into beats with
// byte strobes. The instruction retires once every write response has arrived.
// STORE INP (ExtStoreInp): the same reads and narrowing, each element written on chip to INP
// entry dram_base + y*x_stride + x through the INP scratchpad's write port, in a cycle the
// load engine leaves it free (inp_busy_i); it retires once the last element is written.
module vacc_store (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic halt_i,
  input  logic [63:0] base_i,
  // Instruction queue: its head in, the head's pop and start out.
  input  vacc_pkg::insn_head_t q_i,
  output vacc_pkg::insn_ctl_t q_o,
  // Tokens: prev = compute. There is no next engine: fetch rejects *_next flags here, the top
  // ties that side to 0, and the next pops and pushes stay 0.
  input  vacc_pkg::tok_state_t tok_i,
  output vacc_pkg::tok_ctrl_t tok_o,
  // ACC read port: the request out, data in (the cycle after).
  output vacc_pkg::acc_sram_rd_t acc_o,
  input  logic [vacc_pkg::AccElemBits-1:0] acc_rdata_i,
  // AXI4 write channels.
  output vacc_pkg::wr_req_t wr_o,
  input  vacc_pkg::wr_rsp_t wr_i,
  // INP write port for STORE INP (idle without ExtStoreInp); inp_busy_i: the load engine
  // writes INP this cycle, and has the port.
  output vacc_pkg::inp_sram_wr_t inp_o,
  output logic [vacc_pkg::InpElemBits-1:0] inp_wdata_o,
  input  logic inp_busy_i,
  // Status.
  output vacc_pkg::engine_status_t status_o
);
  // The queue's head, unpacked once; the ACC read request and the write channels' members.
  logic insn_valid, insn_pop;
  logic [vacc_pkg::InsnBits-1:0] insn;
  assign insn_valid = q_i.valid;
  assign insn = q_i.insn;
  logic acc_re, aw_valid, w_valid, w_last;
  logic [vacc_pkg::AccIdxW-1:0] acc_raddr;
  logic [63:0] aw_addr;
  logic [7:0] aw_len;
  logic [vacc_pkg::BusBits-1:0] w_data;
  logic [vacc_pkg::BusBytes-1:0] w_strb;
  assign acc_o.re = acc_re;
  assign acc_o.addr = acc_raddr;
  assign wr_o.aw_valid = aw_valid;
  assign wr_o.aw_addr = aw_addr;
  assign wr_o.aw_len = aw_len;
  assign wr_o.w_valid = w_valid;
  assign wr_o.w_data = w_data;
  assign wr_o.w_strb = w_strb;
  assign wr_o.w_last = w_last;

  localparam int unsigned BusBits = vacc_pkg::BusBits;
  localparam int unsigned BusBytes = vacc_pkg::BusBytes;
  localparam int unsigned BusBytesLog2 = vacc_pkg::BusBytesLog2;
  localparam int unsigned OutBits = vacc_pkg::OutBits;
  localparam int unsigned AccBits = vacc_pkg::AccBits;
  localparam int unsigned OutElemBits = vacc_pkg::OutElemBits;
  localparam int unsigned OutLog2 = vacc_pkg::OutElemBytesLog2;
  localparam int unsigned Lanes = vacc_pkg::Batch * vacc_pkg::BlockOut;
  localparam int unsigned AccIdxW = vacc_pkg::AccIdxW;
  localparam bit Wide = OutLog2 >= BusBytesLog2;
  localparam int unsigned BeatsPerElem = Wide ? (1 << (OutLog2 - BusBytesLog2)) : 1;
  localparam int unsigned ElemsPerBeat = Wide ? 1 : (1 << (BusBytesLog2 - OutLog2));
  localparam int unsigned LaneW = (ElemsPerBeat > 1) ? $clog2(ElemsPerBeat) : 1;
  localparam int unsigned BeatW = (BeatsPerElem > 1) ? $clog2(BeatsPerElem) : 1;
  localparam logic [63:0] BusMask = 64'(BusBytes) - 64'd1;
  localparam int unsigned ElemFifoDepth = 4;

  // ------------------------------------------------------------- decode and sequencing
  logic [AccIdxW-1:0] sram_base;
  logic [31:0] dram_base;
  logic [15:0] y_size, x_size, x_stride;
  assign sram_base = AccIdxW'(insn[vacc_pkg::StoreSramBaseOff +: vacc_pkg::StoreSramBaseW]);
  assign dram_base = 32'(insn[vacc_pkg::StoreDramBaseOff +: vacc_pkg::StoreDramBaseW]);
  assign y_size = 16'(insn[vacc_pkg::StoreYSizeOff +: vacc_pkg::StoreYSizeW]);
  assign x_size = 16'(insn[vacc_pkg::StoreXSizeOff +: vacc_pkg::StoreXSizeW]);
  assign x_stride = 16'(insn[vacc_pkg::StoreXStrideOff +: vacc_pkg::StoreXStrideW]);

  // STORE INP: the instruction's memory id names INP (fetch lets it through only with
  // ExtStoreInp); dram_base is then the first INP entry.
  logic to_inp, to_inp_d, to_inp_q, inp_pop;
  assign to_inp = (vacc_pkg::ExtStoreInp != 0) &&
                  (insn[vacc_pkg::StoreMemOff +: vacc_pkg::StoreMemW] == vacc_pkg::MemInp);

  logic start, exec_done;
  vacc_dep_seq u_seq (
    .clk_i, .rst_ni, .clr_i, .halt_i,
    .valid_i(insn_valid),
    .pop_prev_i(insn[vacc_pkg::StorePopPrevOff]),
    .pop_next_i(1'b0),
    .push_prev_i(insn[vacc_pkg::StorePushPrevOff]),
    .push_next_i(1'b0),
    .can_start_i(1'b1),
    .tok_i, .tok_o,
    .start_o(start), .exec_done_i(exec_done), .retire_o(insn_pop),
    .status_o
  );
  assign q_o.pop = insn_pop;
  assign q_o.start = start;

  logic nonempty;
  assign nonempty = (y_size != 16'd0) && (x_size != 16'd0);

  // ------------------------------------------------------------- ACC reader
  logic rd_active_d, rd_active_q, rd_pending_q;
  logic [AccIdxW-1:0] rd_addr_d, rd_addr_q;
  logic [31:0] rd_left_d, rd_left_q;
  logic elem_full, elem_empty, elem_pop, elem_pop_w;
  logic [$clog2(ElemFifoDepth + 1)-1:0] elem_count;
  logic [OutElemBits-1:0] narrowed, elem_head;

  assign acc_re = rd_active_q &&
                  (32'(elem_count) + (rd_pending_q ? 32'd1 : 32'd0) < ElemFifoDepth);
  assign acc_raddr = rd_addr_q;

  always_comb begin
    rd_active_d = rd_active_q;
    rd_addr_d = rd_addr_q;
    rd_left_d = rd_left_q;
    if (start) begin
      rd_active_d = nonempty;
      rd_addr_d = sram_base;
      rd_left_d = 32'(y_size) * 32'(x_size);
    end else if (acc_re) begin
      rd_addr_d = rd_addr_q + 1'b1;
      rd_left_d = rd_left_q - 32'd1;
      if (rd_left_q == 32'd1) rd_active_d = 1'b0;
    end
    if (clr_i) rd_active_d = 1'b0;
  end

  always_comb begin
    for (int unsigned l = 0; l < Lanes; l++) begin
      narrowed[l*OutBits +: OutBits] = acc_rdata_i[l*AccBits +: OutBits];
    end
  end

  vacc_fifo #(.Width(OutElemBits), .Depth(ElemFifoDepth)) u_elems (
    .clk_i, .rst_ni, .clr_i,
    .push_i(rd_pending_q), .data_i(narrowed), .full_o(elem_full),
    .pop_i(elem_pop), .data_o(elem_head), .empty_o(elem_empty), .count_o(elem_count)
  );

  // ------------------------------------------------------------- AW: bursts per row
  logic aw_active_d, aw_active_q, setup_d, setup_q;
  logic [15:0] rows_left_d, rows_left_q, x_d, x_q, stride_d, stride_q;
  logic [47:0] row_elem_d, row_elem_q, bytes_left_d, bytes_left_q;
  logic [63:0] addr_d, addr_q;
  logic [63:0] beat_off, page_off, beats_row, beats_page, beats, covered;
  logic last_of_row, aw_fire, row_push, row_full, wlen_full, wlen_empty, wlen_pop;
  logic [7:0] wlen_head;
  logic [15:0] bcount_d, bcount_q;

  always_comb begin
    beat_off = addr_q & BusMask;
    beats_row = (beat_off + 64'(bytes_left_q) + BusMask) >> BusBytesLog2;
    page_off = 64'(addr_q[11:0]) & ~BusMask;
    beats_page = (64'd4096 - page_off) >> BusBytesLog2;
    beats = 64'd256;
    if (beats_row < beats) beats = beats_row;
    if (beats_page < beats) beats = beats_page;
    covered = (beats << BusBytesLog2) - beat_off;
    if (64'(bytes_left_q) < covered) covered = 64'(bytes_left_q);
    last_of_row = (covered == 64'(bytes_left_q));
  end

  assign aw_valid = aw_active_q && !setup_q && !wlen_full && !bcount_q[15];
  assign aw_addr = addr_q;
  assign aw_len = 8'(beats - 64'd1);
  assign aw_fire = aw_valid && wr_i.aw_ready;
  assign row_push = aw_active_q && setup_q && !row_full;

  always_comb begin
    aw_active_d = aw_active_q;
    setup_d = setup_q;
    rows_left_d = rows_left_q;
    row_elem_d = row_elem_q;
    addr_d = addr_q;
    bytes_left_d = bytes_left_q;
    x_d = x_q;
    stride_d = stride_q;
    if (start) begin
      aw_active_d = nonempty && !to_inp;
      setup_d = 1'b1;
      rows_left_d = y_size;
      row_elem_d = 48'(dram_base);
      x_d = x_size;
      stride_d = x_stride;
    end else if (row_push) begin
      setup_d = 1'b0;
      addr_d = base_i + (64'(row_elem_q) << OutLog2);
      bytes_left_d = 48'(x_q) << OutLog2;
    end else if (aw_fire) begin
      addr_d = addr_q + covered;
      bytes_left_d = bytes_left_q - 48'(covered);
      if (last_of_row) begin
        rows_left_d = rows_left_q - 16'd1;
        row_elem_d = row_elem_q + 48'(stride_q);
        if (rows_left_q == 16'd1) aw_active_d = 1'b0;
        else setup_d = 1'b1;
      end
    end
    if (clr_i) aw_active_d = 1'b0;
  end

  vacc_fifo #(.Width(8), .Depth(4)) u_wlen (
    .clk_i, .rst_ni, .clr_i,
    .push_i(aw_fire), .data_i(aw_len), .full_o(wlen_full),
    .pop_i(wlen_pop), .data_o(wlen_head), .empty_o(wlen_empty), .count_o()
  );

  // Write responses outstanding (each is taken as it comes: the top holds bready high).
  always_comb begin
    bcount_d = bcount_q;
    if (aw_fire && !wr_i.b_valid) bcount_d = bcount_q + 16'd1;
    if (!aw_fire && wr_i.b_valid) bcount_d = bcount_q - 16'd1;
    if (clr_i) bcount_d = '0;
  end

  // ------------------------------------------------------------- W: beats
  logic [7:0] wbeat_d, wbeat_q;  // beat within the burst
  logic w_fire, w_idle;
  assign w_fire = w_valid && wr_i.w_ready;
  assign w_last = (wbeat_q == wlen_head);
  assign wlen_pop = w_fire && w_last;
  always_comb begin
    wbeat_d = wbeat_q;
    if (w_fire) wbeat_d = w_last ? 8'd0 : wbeat_q + 8'd1;
    if (clr_i) wbeat_d = '0;
  end

  if (Wide) begin : g_wide
    // BeatsPerElem beats per element, low bits first.
    logic [BeatW-1:0] part_d, part_q;
    assign w_valid = !elem_empty && !wlen_empty;
    if (BeatsPerElem == 1) begin : g_one
      assign w_data = elem_head;
    end else begin : g_parts
      assign w_data = elem_head[32'(part_q) * BusBits +: BusBits];
    end
    assign w_strb = '1;
    assign elem_pop_w = w_fire && (32'(part_q) == BeatsPerElem - 1);
    always_comb begin
      part_d = part_q;
      if (w_fire) part_d = elem_pop_w ? '0 : part_q + 1'b1;
      if (clr_i) part_d = '0;
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) part_q <= '0;
      else part_q <= part_d;
    end
    assign row_full = 1'b0;
    assign w_idle = 1'b1;
    logic unused_row;
    assign unused_row = row_push;
  end else begin : g_narrow
    // ElemsPerBeat elements per beat: gather a row's elements into beats with strobes.
    logic [LaneW-1:0] lane_d, lane_q, lane_head;
    logic started_d, started_q, row_empty, row_pop, full_d, full_q;
    logic [15:0] left_d, left_q;
    logic [BusBits-1:0] buf_d, buf_q;
    logic [BusBytes-1:0] strb_d, strb_q;
    localparam int unsigned ElemBytes = 1 << OutLog2;

    vacc_fifo #(.Width(LaneW), .Depth(4)) u_rows (
      .clk_i, .rst_ni, .clr_i,
      .push_i(row_push), .data_i(LaneW'((addr_d & BusMask) >> OutLog2)), .full_o(row_full),
      .pop_i(row_pop), .data_o(lane_head), .empty_o(row_empty), .count_o()
    );

    assign row_pop = !full_q && !started_q && !row_empty;
    assign elem_pop_w = !full_q && started_q && !elem_empty;
    assign w_valid = full_q && !wlen_empty;
    assign w_data = buf_q;
    assign w_strb = strb_q;
    assign w_idle = !full_q && !started_q;

    always_comb begin
      lane_d = lane_q;
      started_d = started_q;
      full_d = full_q;
      left_d = left_q;
      buf_d = buf_q;
      strb_d = strb_q;
      if (w_fire) begin
        full_d = 1'b0;
        strb_d = '0;
      end
      if (row_pop) begin
        lane_d = lane_head;
        started_d = 1'b1;
        left_d = x_q;
      end else if (elem_pop_w) begin
        buf_d[32'(lane_q) * OutElemBits +: OutElemBits] = elem_head;
        strb_d[32'(lane_q) * ElemBytes +: ElemBytes] = '1;
        lane_d = lane_q + 1'b1;
        left_d = left_q - 16'd1;
        if (32'(lane_q) == ElemsPerBeat - 1 || left_q == 16'd1) full_d = 1'b1;
        if (left_q == 16'd1) started_d = 1'b0;
      end
      if (clr_i) begin
        started_d = 1'b0;
        full_d = 1'b0;
        strb_d = '0;
      end
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        lane_q <= '0;
        started_q <= 1'b0;
        full_q <= 1'b0;
        left_q <= '0;
        buf_q <= '0;
        strb_q <= '0;
      end else begin
        lane_q <= lane_d;
        started_q <= started_d;
        full_q <= full_d;
        left_q <= left_d;
        buf_q <= buf_d;
        strb_q <= strb_d;
      end
    end
  end

  // ------------------------------------------------------------- STORE INP: on-chip writes
  assign elem_pop = elem_pop_w || inp_pop;
  if (vacc_pkg::ExtStoreInp != 0) begin : g_inp
    logic [vacc_pkg::InpIdxW-1:0] row_d, row_q, col_d, col_q;
    assign inp_pop = to_inp_q && !elem_empty && !inp_busy_i;
    assign inp_o.we = inp_pop;
    assign inp_o.addr = row_q + col_q;
    assign inp_wdata_o = elem_head;  // OutElemBits == InpElemBits (block_in == block_out)
    always_comb begin
      row_d = row_q;
      col_d = col_q;
      if (start) begin
        row_d = vacc_pkg::InpIdxW'(dram_base);
        col_d = '0;
      end else if (inp_pop) begin
        if (32'(col_q) + 32'd1 == 32'(x_q)) begin
          col_d = '0;
          row_d = row_q + vacc_pkg::InpIdxW'(stride_q);
        end else begin
          col_d = col_q + 1'b1;
        end
      end
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        row_q <= '0;
        col_q <= '0;
      end else begin
        row_q <= row_d;
        col_q <= col_d;
      end
    end
  end else begin : g_no_inp
    assign inp_pop = 1'b0;
    assign inp_o = '0;
    assign inp_wdata_o = '0;
    logic unused_inp;
    assign unused_inp = ^{inp_busy_i, to_inp_q};
  end
  always_comb begin
    to_inp_d = to_inp_q;
    if (start) to_inp_d = to_inp;
    if (clr_i) to_inp_d = 1'b0;
  end

  assign exec_done = !rd_active_q && !rd_pending_q && elem_empty && !aw_active_q &&
                     wlen_empty && w_idle && (bcount_q == '0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_active_q <= 1'b0;
      rd_pending_q <= 1'b0;
      rd_addr_q <= '0;
      rd_left_q <= '0;
      aw_active_q <= 1'b0;
      setup_q <= 1'b0;
      rows_left_q <= '0;
      row_elem_q <= '0;
      addr_q <= '0;
      bytes_left_q <= '0;
      x_q <= '0;
      stride_q <= '0;
      bcount_q <= '0;
      wbeat_q <= '0;
      to_inp_q <= 1'b0;
    end else begin
      rd_active_q <= rd_active_d;
      rd_pending_q <= acc_re && !clr_i;
      rd_addr_q <= rd_addr_d;
      rd_left_q <= rd_left_d;
      aw_active_q <= aw_active_d;
      setup_q <= setup_d;
      rows_left_q <= rows_left_d;
      row_elem_q <= row_elem_d;
      addr_q <= addr_d;
      bytes_left_q <= bytes_left_d;
      x_q <= x_d;
      stride_q <= stride_d;
      bcount_q <= bcount_d;
      wbeat_q <= wbeat_d;
      to_inp_q <= to_inp_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      StoreElemNoOverflow: assert (!(rd_pending_q && elem_full))
        else $error("%m: ACC data with a full element FIFO");
      StoreBNoUnderflow: assert (!(wr_i.b_valid && bcount_q == '0 && !aw_fire))
        else $error("%m: write response without an outstanding burst");
      StoreBurstInPage: assert (!aw_valid ||
          ((64'(addr_q[11:0]) + (beats << BusBytesLog2) - beat_off) <= 64'd4096))
        else $error("%m: burst crosses a 4 KiB page");
      StoreNoStartWhileBusy: assert (!(start && !exec_done))
        else $error("%m: STORE started while the previous one runs");
    end
  end
`endif
endmodule
