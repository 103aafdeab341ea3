// A 2D DMA reader: y_size rows of x_size elements of 2^ElemBytesLog2 bytes each, row r starting
// at element elem_i + r*x_stride_i of device memory (byte base_i), emitted in order as one
// element per valid cycle. The request side splits each row into INCR bursts of at most
// MaxBeats beats that never cross a 4 KiB page and keeps several of them outstanding; the data
// side assembles beats into elements (element wider than the bus) or picks elements out of a
// beat (element narrower than the bus). The output has no back-pressure: a request is issued
// only while the consumer's free space (space_i) covers every element still in flight.
module vacc_dma_rd #(
  parameter int unsigned ElemBytesLog2 = 4,
  parameter int unsigned MaxBeats = 256
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                clr_i,
  input  logic                start_i,
  input  logic [63:0]         base_i,
  input  logic [47:0]         elem_i,
  input  logic [15:0]         y_size_i,
  input  logic [31:0]         x_size_i,
  input  logic [31:0]         x_stride_i,
  input  logic                stop_i,     // issue no further requests (an aborted run)
  input  logic [31:0]         space_i,    // elements the consumer can still take
  output logic                busy_o,     // elements of the current request remain
  output logic                inflight_o, // requested elements not yet emitted
  output logic                elem_valid_o,
  output logic [(8 << ElemBytesLog2)-1:0] elem_o,
  // AXI4 read client (see vacc_axi_rd_arb).
  output vacc_pkg::rd_req_t   rd_o,
  input  vacc_pkg::rd_rsp_t   rd_i,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i
);
  localparam int unsigned ElemBits = 8 << ElemBytesLog2;
  localparam int unsigned BusBytesLog2 = vacc_pkg::BusBytesLog2;
  localparam int unsigned BusBits = vacc_pkg::BusBits;
  localparam bit Wide = ElemBytesLog2 >= BusBytesLog2;
  localparam int unsigned BeatsPerElem = Wide ? (1 << (ElemBytesLog2 - BusBytesLog2)) : 1;
  localparam int unsigned ElemsPerBeat = Wide ? 1 : (1 << (BusBytesLog2 - ElemBytesLog2));
  localparam int unsigned LaneW = (ElemsPerBeat > 1) ? $clog2(ElemsPerBeat) : 1;
  localparam logic [63:0] BusMask = 64'((1 << BusBytesLog2) - 1);

  // ---------------------------------------------------------------- request side
  logic ar_active_d, ar_active_q, setup_d, setup_q;
  logic [15:0] rows_left_d, rows_left_q;
  logic [47:0] row_elem_d, row_elem_q;
  logic [63:0] addr_d, addr_q, base_d, base_q;
  logic [47:0] bytes_left_d, bytes_left_q;
  logic [31:0] x_size_d, x_size_q, stride_d, stride_q, outstanding_d, outstanding_q;
  logic row_fifo_full, row_fifo_push;

  logic [63:0] beat_off, page_off, beats_row, beats_page, beats, covered, elems;
  logic ar_fire, last_of_row;

  always_comb begin
    beat_off = addr_q & BusMask;
    beats_row = (beat_off + 64'(bytes_left_q) + BusMask) >> BusBytesLog2;
    page_off = 64'(addr_q[11:0]) & ~BusMask;
    beats_page = (64'd4096 - page_off) >> BusBytesLog2;
    beats = 64'(MaxBeats);
    if (beats_row < beats) beats = beats_row;
    if (beats_page < beats) beats = beats_page;
    covered = (beats << BusBytesLog2) - beat_off;
    if (64'(bytes_left_q) < covered) covered = 64'(bytes_left_q);
    elems = covered >> ElemBytesLog2;
    last_of_row = (covered == 64'(bytes_left_q));
  end

  assign rd_o.ar_valid = ar_active_q && !setup_q && !stop_i &&
                         (64'(outstanding_q) + elems <= 64'(space_i));
  assign rd_o.ar_addr = addr_q;
  assign rd_o.ar_len = 8'(beats - 64'd1);
  assign ar_fire = rd_o.ar_valid && rd_i.ar_ready;
  assign row_fifo_push = ar_active_q && setup_q && !row_fifo_full;

  logic emit_q;  // an element leaves this cycle (elem_valid_o)

  always_comb begin
    ar_active_d = ar_active_q;
    setup_d = setup_q;
    rows_left_d = rows_left_q;
    row_elem_d = row_elem_q;
    addr_d = addr_q;
    bytes_left_d = bytes_left_q;
    x_size_d = x_size_q;
    stride_d = stride_q;
    base_d = base_q;
    outstanding_d = outstanding_q - (emit_q ? 32'd1 : 32'd0);
    if (start_i) begin
      ar_active_d = (y_size_i != 0) && (x_size_i != 0);
      setup_d = 1'b1;
      rows_left_d = y_size_i;
      row_elem_d = elem_i;
      x_size_d = x_size_i;
      stride_d = x_stride_i;
      base_d = base_i;
    end else if (row_fifo_push) begin
      // Row setup: the byte range of the row.
      setup_d = 1'b0;
      addr_d = base_q + (64'(row_elem_q) << ElemBytesLog2);
      bytes_left_d = 48'(64'(x_size_q) << ElemBytesLog2);
    end else if (ar_fire) begin
      outstanding_d = outstanding_d + 32'(elems);
      addr_d = addr_q + covered;
      bytes_left_d = bytes_left_q - 48'(covered);
      if (last_of_row) begin
        rows_left_d = rows_left_q - 16'd1;
        row_elem_d = row_elem_q + 48'(stride_q);
        if (rows_left_q == 16'd1) ar_active_d = 1'b0;
        else setup_d = 1'b1;
      end
    end
    if (clr_i) begin
      ar_active_d = 1'b0;
      outstanding_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ar_active_q <= 1'b0;
      setup_q <= 1'b0;
      rows_left_q <= '0;
      row_elem_q <= '0;
      addr_q <= '0;
      bytes_left_q <= '0;
      x_size_q <= '0;
      stride_q <= '0;
      base_q <= '0;
      outstanding_q <= '0;
    end else begin
      ar_active_q <= ar_active_d;
      setup_q <= setup_d;
      rows_left_q <= rows_left_d;
      row_elem_q <= row_elem_d;
      addr_q <= addr_d;
      bytes_left_q <= bytes_left_d;
      x_size_q <= x_size_d;
      stride_q <= stride_d;
      base_q <= base_d;
      outstanding_q <= outstanding_d;
    end
  end

  // ---------------------------------------------------------------- data side
  logic d_active_d, d_active_q;
  logic [15:0] d_rows_d, d_rows_q;
  logic [31:0] d_x_d, d_x_q;
  logic emit;  // the current beat completes an element
  logic [ElemBits-1:0] elem_d, elem_q;
  logic emit_d;

  always_comb begin
    d_active_d = d_active_q;
    d_rows_d = d_rows_q;
    d_x_d = d_x_q;
    if (start_i) begin
      d_active_d = (y_size_i != 0) && (x_size_i != 0);
      d_rows_d = y_size_i;
      d_x_d = x_size_i;
    end else if (emit) begin
      d_x_d = d_x_q - 32'd1;
      if (d_x_q == 32'd1) begin
        d_x_d = x_size_q;
        d_rows_d = d_rows_q - 16'd1;
        if (d_rows_q == 16'd1) d_active_d = 1'b0;
      end
    end
    if (clr_i) d_active_d = 1'b0;
    emit_d = emit && !clr_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      d_active_q <= 1'b0;
      d_rows_q <= '0;
      d_x_q <= '0;
      emit_q <= 1'b0;
    end else begin
      d_active_q <= d_active_d;
      d_rows_q <= d_rows_d;
      d_x_q <= d_x_d;
      emit_q <= emit_d;
    end
  end

  // Element data: no reset needed (qualified by emit_q).
  always_ff @(posedge clk_i) begin
    elem_q <= elem_d;
  end

  if (Wide) begin : g_wide
    // BeatsPerElem beats per element, first beat in the low bits.
    logic [$clog2(BeatsPerElem + 1)-1:0] beat_d, beat_q;
    assign rd_o.r_ready = d_active_q;
    assign emit = rd_i.r_valid && d_active_q && (32'(beat_q) == BeatsPerElem - 1);
    logic [ElemBits-1:0] shifted;
    if (BeatsPerElem == 1) begin : g_one
      assign shifted = r_data_i;
    end else begin : g_shift
      assign shifted = {r_data_i, elem_q[ElemBits-1:BusBits]};
    end
    always_comb begin
      beat_d = beat_q;
      elem_d = elem_q;
      if (rd_i.r_valid && d_active_q) begin
        beat_d = emit ? '0 : beat_q + 1'b1;
        elem_d = shifted;
      end
      if (clr_i) beat_d = '0;
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) beat_q <= '0;
      else beat_q <= beat_d;
    end
    assign row_fifo_full = 1'b0;
    // Rows start on element boundaries, which are beat boundaries here.
    logic unused_rows;
    assign unused_rows = row_fifo_push;
  end else begin : g_narrow
    // ElemsPerBeat elements per beat; each row starts at the lane its address falls in.
    logic [LaneW-1:0] lane_d, lane_q, lane_head;
    logic started_d, started_q, row_empty;
    vacc_fifo #(.Width(LaneW), .Depth(4)) u_rows (
      .clk_i, .rst_ni, .clr_i,
      .push_i(row_fifo_push), .data_i(LaneW'((addr_d & BusMask) >> ElemBytesLog2)),
      .full_o(row_fifo_full),
      .pop_i(!started_q && !row_empty && !clr_i), .data_o(lane_head), .empty_o(row_empty),
      .count_o()
    );
    assign emit = started_q && rd_i.r_valid;
    assign rd_o.r_ready = started_q && ((32'(lane_q) == ElemsPerBeat - 1) || d_x_q == 32'd1);
    always_comb begin
      lane_d = lane_q;
      started_d = started_q;
      elem_d = elem_q;
      if (!started_q && !row_empty) begin
        lane_d = lane_head;
        started_d = 1'b1;
      end else if (emit) begin
        elem_d = r_data_i[32'(lane_q) * ElemBits +: ElemBits];
        lane_d = lane_q + 1'b1;
        if (d_x_q == 32'd1) started_d = 1'b0;
      end
      if (clr_i) started_d = 1'b0;
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        lane_q <= '0;
        started_q <= 1'b0;
      end else begin
        lane_q <= lane_d;
        started_q <= started_d;
      end
    end
  end

  assign elem_valid_o = emit_q;
  assign elem_o = elem_q;
  assign busy_o = ar_active_q || d_active_q || emit_q;
  assign inflight_o = (outstanding_q != '0);

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      DmaRdNoDataWhenIdle: assert (!(rd_i.r_valid && rd_o.r_ready && !d_active_q))
        else $error("%m: read data beyond the request");
      DmaRdNoStartWhileBusy: assert (!(start_i && busy_o))
        else $error("%m: start while busy");
      DmaRdBurstInPage: assert (!rd_o.ar_valid ||
          ((64'(addr_q[11:0]) + (beats << BusBytesLog2) - beat_off) <= 64'd4096))
        else $error("%m: burst crosses a 4 KiB page");
    end
  end
`endif
endmodule
