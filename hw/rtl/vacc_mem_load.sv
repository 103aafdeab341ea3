// Executes one LOAD into one scratchpad: a 2D DMA read (vacc_dma_rd) of y_size x x_size
// elements written at sram_base + (y + pad_top)*W + pad_left + x, and the zero padding around
// them (W = pad_left + x_size + pad_right, H = pad_top + y_size + pad_bottom). Data and padding
// are written by two independent walkers sharing the write port; data has priority, so the
// padding fills the cycles in which DRAM data is not arriving.
module vacc_mem_load #(
  parameter int unsigned ElemBytesLog2 = 4,
  parameter int unsigned IdxW = 8
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                clr_i,
  input  logic                start_i,
  input  logic [vacc_pkg::InsnBits-1:0] insn_i,
  input  logic [63:0]         base_i,
  output logic                busy_o,
  // AXI4 read client.
  output vacc_pkg::rd_req_t rd_o,
  input  vacc_pkg::rd_rsp_t rd_i,
  input  logic [vacc_pkg::BusBits-1:0] r_data_i,
  // Scratchpad write port.
  output logic                we_o,
  output logic [IdxW-1:0]     waddr_o,
  output logic [(8 << ElemBytesLog2)-1:0] wdata_o
);
  localparam int unsigned ElemBits = 8 << ElemBytesLog2;
  // Decode (LOAD layout from the generated package).
  logic [IdxW-1:0] sram_base;
  logic [31:0] dram_base;
  logic [15:0] y_size, x_size, x_stride;
  logic [3:0] pad_top, pad_bottom, pad_left, pad_right;
  assign sram_base = IdxW'(insn_i[vacc_pkg::LoadSramBaseOff +: vacc_pkg::LoadSramBaseW]);
  assign dram_base = 32'(insn_i[vacc_pkg::LoadDramBaseOff +: vacc_pkg::LoadDramBaseW]);
  assign y_size = 16'(insn_i[vacc_pkg::LoadYSizeOff +: vacc_pkg::LoadYSizeW]);
  assign x_size = 16'(insn_i[vacc_pkg::LoadXSizeOff +: vacc_pkg::LoadXSizeW]);
  assign x_stride = 16'(insn_i[vacc_pkg::LoadXStrideOff +: vacc_pkg::LoadXStrideW]);
  assign pad_top = 4'(insn_i[vacc_pkg::LoadPadTopOff +: vacc_pkg::LoadPadTopW]);
  assign pad_bottom = 4'(insn_i[vacc_pkg::LoadPadBottomOff +: vacc_pkg::LoadPadBottomW]);
  assign pad_left = 4'(insn_i[vacc_pkg::LoadPadLeftOff +: vacc_pkg::LoadPadLeftW]);
  assign pad_right = 4'(insn_i[vacc_pkg::LoadPadRightOff +: vacc_pkg::LoadPadRightW]);

  logic [16:0] width, height;
  assign width = 17'(pad_left) + 17'(x_size) + 17'(pad_right);
  assign height = 17'(pad_top) + 17'(y_size) + 17'(pad_bottom);

  logic dma_busy, elem_valid;
  logic [ElemBits-1:0] elem;

  vacc_dma_rd #(.ElemBytesLog2(ElemBytesLog2), .MaxBeats(256)) u_dma (
    .clk_i, .rst_ni, .clr_i, .start_i,
    .base_i, .elem_i(48'(dram_base)), .y_size_i(y_size), .x_size_i(32'(x_size)),
    .x_stride_i(32'(x_stride)), .stop_i(1'b0), .space_i('1),
    .busy_o(dma_busy), .inflight_o(),
    .elem_valid_o(elem_valid), .elem_o(elem),
    .rd_o, .rd_i, .r_data_i
  );

  // Geometry of the instruction being executed.
  logic [16:0] w_d, w_q, h_d, h_q;
  logic [15:0] x_d, x_q, y_d, y_q;
  logic [3:0] pt_d, pt_q, pl_d, pl_q;

  // Data walker.
  logic [IdxW-1:0] d_row_d, d_row_q, d_addr_d, d_addr_q;
  logic [15:0] d_x_d, d_x_q;

  // Padding walker.
  logic p_active_d, p_active_q;
  logic [16:0] py_d, py_q, px_d, px_q;
  logic [IdxW-1:0] p_addr_d, p_addr_q;
  logic p_is_data, p_step;
  logic [16:0] p_k;

  assign p_is_data = (py_q >= 17'(pt_q)) && (py_q < 17'(pt_q) + 17'(y_q)) &&
                     (px_q == 17'(pl_q)) && (x_q != 16'd0);
  assign p_k = p_is_data ? 17'(x_q) : 17'd1;
  assign p_step = p_active_q && (p_is_data || !elem_valid);

  always_comb begin
    w_d = w_q;
    h_d = h_q;
    x_d = x_q;
    y_d = y_q;
    pt_d = pt_q;
    pl_d = pl_q;
    d_row_d = d_row_q;
    d_addr_d = d_addr_q;
    d_x_d = d_x_q;
    p_active_d = p_active_q;
    py_d = py_q;
    px_d = px_q;
    p_addr_d = p_addr_q;
    if (start_i) begin
      w_d = width;
      h_d = height;
      x_d = x_size;
      y_d = y_size;
      pt_d = pad_top;
      pl_d = pad_left;
      d_row_d = sram_base + IdxW'(21'(pad_top) * 21'(width)) + IdxW'(pad_left);
      d_addr_d = sram_base + IdxW'(21'(pad_top) * 21'(width)) + IdxW'(pad_left);
      d_x_d = x_size;
      p_active_d = (width != 17'd0) && (height != 17'd0) &&
                   (pad_top != 4'd0 || pad_bottom != 4'd0 || pad_left != 4'd0 ||
                    pad_right != 4'd0);
      py_d = '0;
      px_d = '0;
      p_addr_d = sram_base;
    end else begin
      if (elem_valid) begin
        d_addr_d = d_addr_q + 1'b1;
        d_x_d = d_x_q - 16'd1;
        if (d_x_q == 16'd1) begin
          d_x_d = x_q;
          d_row_d = d_row_q + IdxW'(w_q);
          d_addr_d = d_row_q + IdxW'(w_q);
        end
      end
      if (p_step) begin
        p_addr_d = p_addr_q + IdxW'(p_k);
        px_d = px_q + p_k;
        if (px_q + p_k == w_q) begin
          px_d = '0;
          py_d = py_q + 17'd1;
          if (py_q + 17'd1 == h_q) p_active_d = 1'b0;
        end
      end
    end
    if (clr_i) p_active_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      w_q <= '0;
      h_q <= '0;
      x_q <= '0;
      y_q <= '0;
      pt_q <= '0;
      pl_q <= '0;
      d_row_q <= '0;
      d_addr_q <= '0;
      d_x_q <= '0;
      p_active_q <= 1'b0;
      py_q <= '0;
      px_q <= '0;
      p_addr_q <= '0;
    end else begin
      w_q <= w_d;
      h_q <= h_d;
      x_q <= x_d;
      y_q <= y_d;
      pt_q <= pt_d;
      pl_q <= pl_d;
      d_row_q <= d_row_d;
      d_addr_q <= d_addr_d;
      d_x_q <= d_x_d;
      p_active_q <= p_active_d;
      py_q <= py_d;
      px_q <= px_d;
      p_addr_q <= p_addr_d;
    end
  end

  assign we_o = elem_valid || (p_active_q && !p_is_data);
  assign waddr_o = elem_valid ? d_addr_q : p_addr_q;
  assign wdata_o = elem_valid ? elem : '0;
  assign busy_o = dma_busy || p_active_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      MemLoadNoStartWhileBusy: assert (!(start_i && busy_o))
        else $error("%m: LOAD started while the previous one runs");
    end
  end
`endif
endmodule
