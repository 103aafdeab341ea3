// A test-only stand-in with the ports of the real `vacc_top` (hw/), used to test the
// simulator's harness (AXI4-Lite host, AXI4 memory model, counters, cycle limit, trace events)
// independently of the accelerator. It is never the product: simulator/rtl builds the real RTL
// whenever hw/ provides it.
//
// Behaviour: on start it copies `insn_count` bus words from base + insn_offset to
// base + insn_offset + insn_count * BusBytes, in INCR bursts of up to 16 beats. Each read
// burst is reported as one "load" instruction and each write burst as one "store" instruction
// on the trace signals. The register map is driver/include/vacc/driver/registers.h.
module vacc_top #(
  parameter int BusBits = 64
) (
  input  logic                 ap_clk,
  input  logic                 ap_rst_n,
  output logic                 interrupt,
  // AXI4-Lite control slave.
  input  logic                 s_axi_control_awvalid,
  output logic                 s_axi_control_awready,
  input  logic [11:0]          s_axi_control_awaddr,
  input  logic                 s_axi_control_wvalid,
  output logic                 s_axi_control_wready,
  input  logic [31:0]          s_axi_control_wdata,
  input  logic [3:0]           s_axi_control_wstrb,
  output logic                 s_axi_control_bvalid,
  input  logic                 s_axi_control_bready,
  output logic [1:0]           s_axi_control_bresp,
  input  logic                 s_axi_control_arvalid,
  output logic                 s_axi_control_arready,
  input  logic [11:0]          s_axi_control_araddr,
  output logic                 s_axi_control_rvalid,
  input  logic                 s_axi_control_rready,
  output logic [31:0]          s_axi_control_rdata,
  output logic [1:0]           s_axi_control_rresp,
  // AXI4 master to device memory.
  output logic                 m_axi_gmem_awvalid,
  input  logic                 m_axi_gmem_awready,
  output logic [63:0]          m_axi_gmem_awaddr,
  output logic [7:0]           m_axi_gmem_awlen,
  output logic [2:0]           m_axi_gmem_awsize,
  output logic [1:0]           m_axi_gmem_awburst,
  output logic                 m_axi_gmem_wvalid,
  input  logic                 m_axi_gmem_wready,
  output logic [BusBits-1:0]   m_axi_gmem_wdata,
  output logic [BusBits/8-1:0] m_axi_gmem_wstrb,
  output logic                 m_axi_gmem_wlast,
  input  logic                 m_axi_gmem_bvalid,
  output logic                 m_axi_gmem_bready,
  input  logic [1:0]           m_axi_gmem_bresp,
  output logic                 m_axi_gmem_arvalid,
  input  logic                 m_axi_gmem_arready,
  output logic [63:0]          m_axi_gmem_araddr,
  output logic [7:0]           m_axi_gmem_arlen,
  output logic [2:0]           m_axi_gmem_arsize,
  output logic [1:0]           m_axi_gmem_arburst,
  input  logic                 m_axi_gmem_rvalid,
  output logic                 m_axi_gmem_rready,
  input  logic [BusBits-1:0]   m_axi_gmem_rdata,
  input  logic                 m_axi_gmem_rlast,
  input  logic [1:0]           m_axi_gmem_rresp
);
  localparam int BusBytes = BusBits / 8;
  localparam int MaxBeats = 16;

  // Per-engine instruction events (bit 0 load, 1 compute, 2 store), read by the simulator.
  logic [2:0] trace_insn_start /*verilator public_flat_rd*/;
  logic [2:0] trace_insn_end /*verilator public_flat_rd*/;

  typedef enum logic [2:0] {
    StIdle, StReadAddr, StReadData, StWriteAddr, StWriteData, StWriteResp
  } state_e;

  state_e state_q;
  logic [31:0] insn_count_q, insn_offset_q, cycle_limit_q;
  logic [63:0] base_q, cycles_q;
  logic [31:0] load_busy_q, store_busy_q;
  logic [31:0] remaining_q;
  logic [63:0] src_q, dst_q;
  logic [4:0] beats_q, beat_q;
  logic [BusBits-1:0] buf_q [MaxBeats];
  logic start_q, done_q, gie_q, ier_q, isr_q, deadlock_q;
  logic aw_seen_q, w_seen_q;
  logic [11:0] awaddr_q;
  logic [31:0] wdata_q;

  wire running = state_q != StIdle;
  wire [4:0] next_beats = remaining_q >= MaxBeats ? 5'(MaxBeats) : remaining_q[4:0];

  // AXI4-Lite: one write and one read at a time.
  assign s_axi_control_awready = !aw_seen_q && !s_axi_control_bvalid;
  assign s_axi_control_wready = !w_seen_q && !s_axi_control_bvalid;
  assign s_axi_control_bresp = 2'b00;
  assign s_axi_control_rresp = 2'b00;
  assign s_axi_control_arready = !s_axi_control_rvalid;
  assign interrupt = gie_q && ier_q && isr_q;

  function automatic logic [31:0] read_reg(logic [11:0] addr);
    unique case (addr)
      12'h00: read_reg = {28'd0, !running && !start_q, !running && !start_q, done_q, start_q};
      12'h04: read_reg = {31'd0, gie_q};
      12'h08: read_reg = {31'd0, ier_q};
      12'h0C: read_reg = {31'd0, isr_q};
      12'h10: read_reg = insn_count_q;
      12'h18: read_reg = base_q[31:0];
      12'h1C: read_reg = base_q[63:32];
      12'h20: read_reg = insn_offset_q;
      12'h28: read_reg = cycles_q[31:0];
      12'h2C: read_reg = cycles_q[63:32];
      12'h30: read_reg = load_busy_q;
      12'h40: read_reg = store_busy_q;
      12'h4C: read_reg = {30'd0, deadlock_q, 1'b0};
      12'h54: read_reg = cycle_limit_q;
      default: read_reg = 32'd0;
    endcase
  endfunction

  assign m_axi_gmem_araddr = src_q;
  assign m_axi_gmem_arlen = 8'(next_beats) - 8'd1;
  assign m_axi_gmem_arsize = 3'($clog2(BusBytes));
  assign m_axi_gmem_arburst = 2'b01;
  assign m_axi_gmem_arvalid = state_q == StReadAddr;
  assign m_axi_gmem_rready = state_q == StReadData;
  assign m_axi_gmem_awaddr = dst_q;
  assign m_axi_gmem_awlen = 8'(beats_q) - 8'd1;
  assign m_axi_gmem_awsize = 3'($clog2(BusBytes));
  assign m_axi_gmem_awburst = 2'b01;
  assign m_axi_gmem_awvalid = state_q == StWriteAddr;
  assign m_axi_gmem_wvalid = state_q == StWriteData;
  assign m_axi_gmem_wdata = buf_q[beat_q[3:0]];
  assign m_axi_gmem_wstrb = '1;
  assign m_axi_gmem_wlast = beat_q == beats_q - 5'd1;
  assign m_axi_gmem_bready = state_q == StWriteResp;

  always_comb begin
    trace_insn_start = 3'b000;
    trace_insn_end = 3'b000;
    trace_insn_start[0] = state_q == StReadAddr && m_axi_gmem_arready;
    trace_insn_end[0] = state_q == StReadData && m_axi_gmem_rvalid && m_axi_gmem_rlast;
    trace_insn_start[2] = state_q == StWriteAddr && m_axi_gmem_awready;
    trace_insn_end[2] = state_q == StWriteResp && m_axi_gmem_bvalid;
  end

  always_ff @(posedge ap_clk) begin
    if (!ap_rst_n) begin
      state_q <= StIdle;
      insn_count_q <= '0;
      insn_offset_q <= '0;
      cycle_limit_q <= '0;
      base_q <= '0;
      cycles_q <= '0;
      load_busy_q <= '0;
      store_busy_q <= '0;
      remaining_q <= '0;
      src_q <= '0;
      dst_q <= '0;
      beats_q <= '0;
      beat_q <= '0;
      start_q <= 1'b0;
      done_q <= 1'b0;
      gie_q <= 1'b0;
      ier_q <= 1'b0;
      isr_q <= 1'b0;
      deadlock_q <= 1'b0;
      aw_seen_q <= 1'b0;
      w_seen_q <= 1'b0;
      awaddr_q <= '0;
      wdata_q <= '0;
      s_axi_control_bvalid <= 1'b0;
      s_axi_control_rvalid <= 1'b0;
      s_axi_control_rdata <= '0;
    end else begin
      // Register writes: address and data may arrive in either order.
      if (s_axi_control_awvalid && s_axi_control_awready) begin
        aw_seen_q <= 1'b1;
        awaddr_q <= s_axi_control_awaddr;
      end
      if (s_axi_control_wvalid && s_axi_control_wready) begin
        w_seen_q <= 1'b1;
        wdata_q <= s_axi_control_wdata;
      end
      if (aw_seen_q && w_seen_q) begin
        aw_seen_q <= 1'b0;
        w_seen_q <= 1'b0;
        s_axi_control_bvalid <= 1'b1;
        unique case (awaddr_q)
          12'h00: if (wdata_q[0] && !running) start_q <= 1'b1;
          12'h04: gie_q <= wdata_q[0];
          12'h08: ier_q <= wdata_q[0];
          12'h0C: isr_q <= isr_q & ~wdata_q[0];
          12'h10: insn_count_q <= wdata_q;
          12'h18: base_q[31:0] <= wdata_q;
          12'h1C: base_q[63:32] <= wdata_q;
          12'h20: insn_offset_q <= wdata_q;
          12'h54: cycle_limit_q <= wdata_q;
          default: ;
        endcase
      end
      if (s_axi_control_bvalid && s_axi_control_bready) s_axi_control_bvalid <= 1'b0;
      if (s_axi_control_arvalid && s_axi_control_arready) begin
        s_axi_control_rvalid <= 1'b1;
        s_axi_control_rdata <= read_reg(s_axi_control_araddr);
        if (s_axi_control_araddr == 12'h00) done_q <= 1'b0;  // done clears on read
      end
      if (s_axi_control_rvalid && s_axi_control_rready) s_axi_control_rvalid <= 1'b0;

      if (running) cycles_q <= cycles_q + 64'd1;
      if (state_q == StReadAddr || state_q == StReadData) load_busy_q <= load_busy_q + 32'd1;
      if (state_q == StWriteAddr || state_q == StWriteData || state_q == StWriteResp) begin
        store_busy_q <= store_busy_q + 32'd1;
      end

      unique case (state_q)
        StIdle: if (start_q) begin
          start_q <= 1'b0;
          done_q <= 1'b0;
          deadlock_q <= 1'b0;
          cycles_q <= '0;
          load_busy_q <= '0;
          store_busy_q <= '0;
          remaining_q <= insn_count_q;
          src_q <= base_q + 64'(insn_offset_q);
          dst_q <= base_q + 64'(insn_offset_q) + 64'(insn_count_q) * 64'(BusBytes);
          state_q <= insn_count_q == 0 ? StIdle : StReadAddr;
          if (insn_count_q == 0) done_q <= 1'b1;
        end
        StReadAddr: begin
          beats_q <= next_beats;
          beat_q <= '0;
          if (m_axi_gmem_arready) state_q <= StReadData;
        end
        StReadData: if (m_axi_gmem_rvalid) begin
          buf_q[beat_q[3:0]] <= m_axi_gmem_rdata;
          beat_q <= beat_q + 5'd1;
          if (m_axi_gmem_rlast) begin
            beat_q <= '0;
            state_q <= StWriteAddr;
          end
        end
        StWriteAddr: if (m_axi_gmem_awready) state_q <= StWriteData;
        StWriteData: if (m_axi_gmem_wready) begin
          beat_q <= beat_q + 5'd1;
          if (m_axi_gmem_wlast) state_q <= StWriteResp;
        end
        StWriteResp: if (m_axi_gmem_bvalid) begin
          remaining_q <= remaining_q - 32'(beats_q);
          src_q <= src_q + 64'(beats_q) * 64'(BusBytes);
          dst_q <= dst_q + 64'(beats_q) * 64'(BusBytes);
          if (remaining_q == 32'(beats_q)) begin
            state_q <= StIdle;
            done_q <= 1'b1;
            isr_q <= 1'b1;
          end else begin
            state_q <= StReadAddr;
          end
        end
        default: state_q <= StIdle;
      endcase

      // Cycle limit: stop with the deadlock bit set, and raise done.
      if (running && cycle_limit_q != 0 && cycles_q + 64'd1 >= 64'(cycle_limit_q)) begin
        state_q <= StIdle;
        deadlock_q <= 1'b1;
        done_q <= 1'b1;
        isr_q <= 1'b1;
      end
    end
  end
endmodule
