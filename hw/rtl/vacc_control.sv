// The AXI4-Lite control slave and run controller: the register map of
// driver/include/vacc/driver/registers.h with the ap_ctrl_hs protocol. Writing 1 to bit0 of
// 0x00 starts a run (clr_o pulses to empty every queue, then go_o); done (bit1) is set when
// the run ends and clears when 0x00 is read. A run ends normally when core_done_i, or early on
// an illegal instruction, an instruction that reaches beyond a scratchpad, or when the cycle
// counter reaches the cycle limit (0x54, 0 = none):
// then halt_o stops new instructions and the run ends once the core is quiet.
module vacc_control (
  input  logic clk_i,
  input  logic rst_ni,
  // AXI4-Lite slave.
  input  logic        awvalid_i,
  output logic        awready_o,
  input  logic [11:0] awaddr_i,
  input  logic        wvalid_i,
  output logic        wready_o,
  input  logic [31:0] wdata_i,
  input  logic [3:0]  wstrb_i,
  output logic        bvalid_o,
  input  logic        bready_i,
  input  logic        arvalid_i,
  output logic        arready_o,
  input  logic [11:0] araddr_i,
  output logic        rvalid_o,
  input  logic        rready_i,
  output logic [31:0] rdata_o,
  output logic        interrupt_o,
  // Run control.
  output logic        clr_o,
  output logic        go_o,
  output logic        halt_o,
  output logic [63:0] base_o,
  output logic [31:0] insn_count_o,
  output logic [31:0] insn_offset_o,
  input  logic        core_done_i,
  input  logic        quiet_i,
  input  logic        illegal_i,
  input  logic [31:0] illegal_idx_i,
  input  logic        range_i,      // an instruction reaches beyond a scratchpad
  input  logic [31:0] range_idx_i,
  // Counter events: each engine's busy and stall cycles (its quiet and idle are the top's).
  input  vacc_pkg::engine_status_t load_status_i,
  input  vacc_pkg::engine_status_t compute_status_i,
  input  vacc_pkg::engine_status_t store_status_i,
  input  logic        gemm_busy_i
);
  // Offsets (registers.h).
  localparam logic [11:0] RegControl = 12'h00;
  localparam logic [11:0] RegGie = 12'h04;
  localparam logic [11:0] RegIer = 12'h08;
  localparam logic [11:0] RegIsr = 12'h0C;
  localparam logic [11:0] RegInsnCount = 12'h10;
  localparam logic [11:0] RegBaseLow = 12'h18;
  localparam logic [11:0] RegBaseHigh = 12'h1C;
  localparam logic [11:0] RegInsnOffset = 12'h20;
  localparam logic [11:0] RegCyclesLow = 12'h28;
  localparam logic [11:0] RegCyclesHigh = 12'h2C;
  localparam logic [11:0] RegLoadBusy = 12'h30;
  localparam logic [11:0] RegLoadStall = 12'h34;
  localparam logic [11:0] RegComputeBusy = 12'h38;
  localparam logic [11:0] RegComputeStall = 12'h3C;
  localparam logic [11:0] RegStoreBusy = 12'h40;
  localparam logic [11:0] RegStoreStall = 12'h44;
  localparam logic [11:0] RegGemmBusy = 12'h48;
  localparam logic [11:0] RegErrorStatus = 12'h4C;
  localparam logic [11:0] RegErrorInsn = 12'h50;
  localparam logic [11:0] RegCycleLimit = 12'h54;

  logic start_d, start_q, done_d, done_q, running_d, running_q, halt_d, halt_q, go_q;
  logic gie_d, gie_q;
  logic [1:0] ier_d, ier_q, isr_d, isr_q;
  logic [2:0] err_d, err_q;
  logic [31:0] insn_count_d, insn_count_q, insn_offset_d, insn_offset_q;
  logic [31:0] base_lo_d, base_lo_q, base_hi_d, base_hi_q, limit_d, limit_q;
  logic [31:0] err_idx_d, err_idx_q;
  logic [63:0] cycles_d, cycles_q;
  logic [7*32-1:0] cnt_d, cnt_q;  // busy/stall counters, in register order from 0x30
  logic bvalid_d, bvalid_q, rvalid_d, rvalid_q;
  logic [31:0] rdata_d, rdata_q;

  // AXI4-Lite front end: AW, W and AR are captured into registers (ready depends only on
  // state, never on valid) and acted on in a later cycle, so nothing but these capture
  // registers and the B/R valid flags depends combinationally on the host's inputs. A write
  // happens once both its address and its data are held; B follows in the next cycle.
  logic aw_got_d, aw_got_q, w_got_d, w_got_q, ar_got_d, ar_got_q;
  logic [11:0] awaddr_d, awaddr_q, araddr_d, araddr_q;
  logic [31:0] wdata_d, wdata_q;
  logic [3:0] wstrb_d, wstrb_q;
  logic wr_fire, rd_fire, start_fire, end_run;
  assign awready_o = !aw_got_q && !bvalid_q;
  assign wready_o = !w_got_q && !bvalid_q;
  assign arready_o = !ar_got_q && !rvalid_q;
  assign wr_fire = aw_got_q && w_got_q;
  assign rd_fire = ar_got_q;

  always_comb begin
    aw_got_d = aw_got_q;
    w_got_d = w_got_q;
    ar_got_d = ar_got_q;
    awaddr_d = awaddr_q;
    wdata_d = wdata_q;
    wstrb_d = wstrb_q;
    araddr_d = araddr_q;
    bvalid_d = bvalid_q && !bready_i;
    rvalid_d = rvalid_q && !rready_i;
    if (awvalid_i && awready_o) begin
      aw_got_d = 1'b1;
      awaddr_d = awaddr_i;
    end
    if (wvalid_i && wready_o) begin
      w_got_d = 1'b1;
      wdata_d = wdata_i;
      wstrb_d = wstrb_i;
    end
    if (arvalid_i && arready_o) begin
      ar_got_d = 1'b1;
      araddr_d = araddr_i;
    end
    if (wr_fire) begin
      aw_got_d = 1'b0;
      w_got_d = 1'b0;
      bvalid_d = 1'b1;
    end
    if (rd_fire) begin
      ar_got_d = 1'b0;
      rvalid_d = 1'b1;
    end
  end

  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [3:0] strb);
    logic [31:0] r;
    for (int unsigned b = 0; b < 4; b++) r[8*b +: 8] = strb[b] ? data[8*b +: 8] : old[8*b +: 8];
    merge = r;
  endfunction

  assign start_fire = wr_fire && awaddr_q == RegControl && wstrb_q[0] && wdata_q[0] &&
                      !running_q;
  assign end_run = running_q && !start_fire && (halt_q ? quiet_i : core_done_i);

  logic limit_hit;
  assign limit_hit = running_q && (limit_q != '0) && (cycles_q == 64'(limit_q));

  logic [6:0] events;
  assign events = {gemm_busy_i, store_status_i.stall, store_status_i.busy, compute_status_i.stall,
                   compute_status_i.busy, load_status_i.stall, load_status_i.busy};
  logic unused_status;
  assign unused_status = ^{load_status_i.quiet, load_status_i.idle, compute_status_i.quiet,
                           compute_status_i.idle, store_status_i.quiet, store_status_i.idle};

  always_comb begin
    start_d = start_q;
    done_d = done_q;
    running_d = running_q;
    halt_d = halt_q;
    gie_d = gie_q;
    ier_d = ier_q;
    isr_d = isr_q;
    err_d = err_q;
    err_idx_d = err_idx_q;
    insn_count_d = insn_count_q;
    insn_offset_d = insn_offset_q;
    base_lo_d = base_lo_q;
    base_hi_d = base_hi_q;
    limit_d = limit_q;
    cycles_d = cycles_q;
    cnt_d = cnt_q;
    rdata_d = rdata_q;

    // Register writes.
    if (wr_fire) begin
      unique case (awaddr_q)
        RegGie: if (wstrb_q[0]) gie_d = wdata_q[0];
        RegIer: if (wstrb_q[0]) ier_d = wdata_q[1:0];
        RegIsr: if (wstrb_q[0]) isr_d = isr_q ^ wdata_q[1:0];  // toggle on write
        RegInsnCount: insn_count_d = merge(insn_count_q, wdata_q, wstrb_q);
        RegBaseLow: base_lo_d = merge(base_lo_q, wdata_q, wstrb_q);
        RegBaseHigh: base_hi_d = merge(base_hi_q, wdata_q, wstrb_q);
        RegInsnOffset: insn_offset_d = merge(insn_offset_q, wdata_q, wstrb_q);
        RegCycleLimit: limit_d = merge(limit_q, wdata_q, wstrb_q);
        default: ;
      endcase
    end

    // Register reads (done clears on read of the control register).
    if (rd_fire) begin
      unique case (araddr_q)
        RegControl: begin
          rdata_d = {28'd0, done_q, !running_q, done_q, start_q};
          done_d = 1'b0;
        end
        RegGie: rdata_d = {31'd0, gie_q};
        RegIer: rdata_d = {30'd0, ier_q};
        RegIsr: rdata_d = {30'd0, isr_q};
        RegInsnCount: rdata_d = insn_count_q;
        RegBaseLow: rdata_d = base_lo_q;
        RegBaseHigh: rdata_d = base_hi_q;
        RegInsnOffset: rdata_d = insn_offset_q;
        RegCyclesLow: rdata_d = cycles_q[31:0];
        RegCyclesHigh: rdata_d = cycles_q[63:32];
        RegLoadBusy: rdata_d = cnt_q[32*0 +: 32];
        RegLoadStall: rdata_d = cnt_q[32*1 +: 32];
        RegComputeBusy: rdata_d = cnt_q[32*2 +: 32];
        RegComputeStall: rdata_d = cnt_q[32*3 +: 32];
        RegStoreBusy: rdata_d = cnt_q[32*4 +: 32];
        RegStoreStall: rdata_d = cnt_q[32*5 +: 32];
        RegGemmBusy: rdata_d = cnt_q[32*6 +: 32];
        RegErrorStatus: rdata_d = {29'd0, err_q};
        RegErrorInsn: rdata_d = err_idx_q;
        RegCycleLimit: rdata_d = limit_q;
        default: rdata_d = '0;
      endcase
    end

    // Run control.
    if (start_fire) begin
      start_d = 1'b1;
      done_d = 1'b0;
      running_d = 1'b1;
      halt_d = 1'b0;
      err_d = '0;
      err_idx_d = '0;
      cycles_d = '0;
      cnt_d = '0;
    end else if (running_q) begin
      if (!halt_q) cycles_d = cycles_q + 64'd1;
      for (int unsigned k = 0; k < 7; k++) begin
        if (events[k]) cnt_d[32*k +: 32] = cnt_q[32*k +: 32] + 32'd1;
      end
      if (range_i && !halt_q) begin
        halt_d = 1'b1;
        err_d[2] = 1'b1;
        err_idx_d = range_idx_i;
      end else if (illegal_i && !halt_q) begin
        halt_d = 1'b1;
        err_d[0] = 1'b1;
        err_idx_d = illegal_idx_i;
      end
      if (limit_hit && !halt_q) begin
        halt_d = 1'b1;
        err_d[1] = 1'b1;
        cycles_d = cycles_q;
      end
      if (end_run) begin
        running_d = 1'b0;
        start_d = 1'b0;
        done_d = 1'b1;
        if (ier_q[0]) isr_d[0] = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      start_q <= 1'b0;
      done_q <= 1'b0;
      running_q <= 1'b0;
      halt_q <= 1'b0;
      go_q <= 1'b0;
      gie_q <= 1'b0;
      ier_q <= '0;
      isr_q <= '0;
      err_q <= '0;
      err_idx_q <= '0;
      insn_count_q <= '0;
      insn_offset_q <= '0;
      base_lo_q <= '0;
      base_hi_q <= '0;
      limit_q <= '0;
      cycles_q <= '0;
      cnt_q <= '0;
      bvalid_q <= 1'b0;
      rvalid_q <= 1'b0;
      rdata_q <= '0;
      aw_got_q <= 1'b0;
      w_got_q <= 1'b0;
      ar_got_q <= 1'b0;
      awaddr_q <= '0;
      araddr_q <= '0;
      wdata_q <= '0;
      wstrb_q <= '0;
    end else begin
      start_q <= start_d;
      done_q <= done_d;
      running_q <= running_d;
      halt_q <= halt_d;
      go_q <= start_fire;
      gie_q <= gie_d;
      ier_q <= ier_d;
      isr_q <= isr_d;
      err_q <= err_d;
      err_idx_q <= err_idx_d;
      insn_count_q <= insn_count_d;
      insn_offset_q <= insn_offset_d;
      base_lo_q <= base_lo_d;
      base_hi_q <= base_hi_d;
      limit_q <= limit_d;
      cycles_q <= cycles_d;
      cnt_q <= cnt_d;
      bvalid_q <= bvalid_d;
      rvalid_q <= rvalid_d;
      rdata_q <= rdata_d;
      aw_got_q <= aw_got_d;
      w_got_q <= w_got_d;
      ar_got_q <= ar_got_d;
      awaddr_q <= awaddr_d;
      araddr_q <= araddr_d;
      wdata_q <= wdata_d;
      wstrb_q <= wstrb_d;
    end
  end

  assign bvalid_o = bvalid_q;
  assign rvalid_o = rvalid_q;
  assign rdata_o = rdata_q;
  assign interrupt_o = gie_q && |(isr_q & ier_q);
  assign clr_o = start_fire;
  assign go_o = go_q;
  assign halt_o = halt_q;
  assign base_o = {base_hi_q, base_lo_q};
  assign insn_count_o = insn_count_q;
  assign insn_offset_o = insn_offset_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      CtrlBHoldsUntilReady: assert (!(bvalid_q && !bready_i) || bvalid_d)
        else $error("%m: write response dropped");
      CtrlRHoldsUntilReady: assert (!(rvalid_q && !rready_i) || (rvalid_d && rdata_d == rdata_q))
        else $error("%m: read data dropped or changed");
    end
  end
`endif
endmodule
