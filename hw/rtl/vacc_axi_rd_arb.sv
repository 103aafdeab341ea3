// Shares the AXI4 read channels among NumClients DMA readers. Requests are granted
// round-robin through a registered AR stage; the memory returns read data in request order,
// so an order FIFO of client ids (depth MaxOutstanding) routes each burst's beats back.
// Clients never stall R for long (their consumers are scratchpads or credited FIFOs), so one
// client's burst cannot block another's forever.
module vacc_axi_rd_arb #(
  parameter int unsigned NumClients = 2,
  parameter int unsigned MaxOutstanding = 8
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // Clients.
  input  logic [NumClients-1:0]    ar_valid_i,
  input  logic [NumClients*64-1:0] ar_addr_i,
  input  logic [NumClients*8-1:0]  ar_len_i,
  output logic [NumClients-1:0]    ar_ready_o,
  output logic [NumClients-1:0]    r_valid_o,
  input  logic [NumClients-1:0]    r_ready_i,
  // Memory.
  output logic                     m_ar_valid_o,
  input  logic                     m_ar_ready_i,
  output logic [63:0]              m_ar_addr_o,
  output logic [7:0]               m_ar_len_o,
  input  logic                     m_r_valid_i,
  output logic                     m_r_ready_o,
  input  logic                     m_r_last_i
);
  localparam int unsigned IdW = (NumClients > 1) ? $clog2(NumClients) : 1;
  logic ar_valid_d, ar_valid_q;
  logic [63:0] ar_addr_d, ar_addr_q;
  logic [7:0] ar_len_d, ar_len_q;
  logic [IdW-1:0] rr_d, rr_q;

  logic grant_valid;
  logic [IdW-1:0] grant_id;
  logic order_full, order_empty, capture;
  logic [IdW-1:0] head_id;

  // Round-robin: the first requester at or after rr_q.
  always_comb begin
    grant_valid = 1'b0;
    grant_id = '0;
    for (int unsigned k = 0; k < NumClients; k++) begin
      logic [IdW-1:0] c;
      c = IdW'((32'(rr_q) + k) % NumClients);
      if (!grant_valid && ar_valid_i[c]) begin
        grant_valid = 1'b1;
        grant_id = IdW'(c);
      end
    end
  end

  assign capture = grant_valid && !order_full && (!ar_valid_q || m_ar_ready_i);

  always_comb begin
    ar_ready_o = '0;
    if (capture) ar_ready_o[grant_id] = 1'b1;
    ar_valid_d = ar_valid_q && !m_ar_ready_i;
    ar_addr_d = ar_addr_q;
    ar_len_d = ar_len_q;
    rr_d = rr_q;
    if (capture) begin
      ar_valid_d = 1'b1;
      ar_addr_d = ar_addr_i[64*grant_id +: 64];
      ar_len_d = ar_len_i[8*grant_id +: 8];
      rr_d = (32'(grant_id) == NumClients - 1) ? '0 : grant_id + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ar_valid_q <= 1'b0;
      ar_addr_q <= '0;
      ar_len_q <= '0;
      rr_q <= '0;
    end else begin
      ar_valid_q <= ar_valid_d;
      ar_addr_q <= ar_addr_d;
      ar_len_q <= ar_len_d;
      rr_q <= rr_d;
    end
  end

  vacc_fifo #(.Width(IdW), .Depth(MaxOutstanding)) u_order (
    .clk_i, .rst_ni, .clr_i(1'b0),
    .push_i(capture), .data_i(grant_id), .full_o(order_full),
    .pop_i(m_r_valid_i && m_r_ready_o && m_r_last_i), .data_o(head_id),
    .empty_o(order_empty), .count_o()
  );

  assign m_ar_valid_o = ar_valid_q;
  assign m_ar_addr_o = ar_addr_q;
  assign m_ar_len_o = ar_len_q;

  always_comb begin
    r_valid_o = '0;
    r_valid_o[head_id] = m_r_valid_i && !order_empty;
  end
  assign m_r_ready_o = !order_empty && r_ready_i[head_id];

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      ArbReadDataExpected: assert (!(m_r_valid_i && order_empty))
        else $error("%m: read data with no outstanding request");
      ArbArStable: assert (!(ar_valid_q && !m_ar_ready_i) || ar_valid_d)
        else $error("%m: AR dropped before its handshake");
    end
  end
`endif
endmodule
