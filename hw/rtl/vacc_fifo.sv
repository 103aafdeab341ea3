// Synchronous show-ahead FIFO: data_o is the head whenever empty_o is low. Storage is a plain
// array so that synthesis may map it to distributed RAM. clr_i empties it (a new run).
module vacc_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4
) (
  input  logic              clk_i,
  input  logic              rst_ni,
  input  logic              clr_i,
  input  logic              push_i,
  input  logic [Width-1:0]  data_i,
  output logic              full_o,
  input  logic              pop_i,
  output logic [Width-1:0]  data_o,
  output logic              empty_o,
  output logic [$clog2(Depth + 1)-1:0] count_o
);
  localparam int unsigned PtrW = (Depth > 1) ? $clog2(Depth) : 1;
  localparam int unsigned CountW = $clog2(Depth + 1);

  logic [Width-1:0] mem_q [Depth];
  logic [PtrW-1:0] wptr_d, wptr_q, rptr_d, rptr_q;
  logic [CountW-1:0] count_d, count_q;

  function automatic logic [PtrW-1:0] next_ptr(logic [PtrW-1:0] ptr);
    next_ptr = (32'(ptr) == Depth - 1) ? '0 : ptr + 1'b1;
  endfunction

  always_comb begin
    wptr_d = wptr_q;
    rptr_d = rptr_q;
    count_d = count_q;
    if (clr_i) begin
      wptr_d = '0;
      rptr_d = '0;
      count_d = '0;
    end else begin
      if (push_i) wptr_d = next_ptr(wptr_q);
      if (pop_i) rptr_d = next_ptr(rptr_q);
      if (push_i && !pop_i) count_d = count_q + 1'b1;
      if (pop_i && !push_i) count_d = count_q - 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q <= '0;
      rptr_q <= '0;
      count_q <= '0;
    end else begin
      wptr_q <= wptr_d;
      rptr_q <= rptr_d;
      count_q <= count_d;
    end
  end

  // Storage without reset (a RAM).
  always_ff @(posedge clk_i) begin
    if (push_i && !clr_i) mem_q[wptr_q] <= data_i;
  end

  assign data_o = mem_q[rptr_q];
  assign empty_o = (count_q == '0);
  assign full_o = (32'(count_q) == Depth);
  assign count_o = count_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      FifoNoPushWhenFull: assert (!(push_i && full_o && !pop_i))
        else $error("%m: push into a full FIFO");
      FifoNoPopWhenEmpty: assert (!(pop_i && empty_o))
        else $error("%m: pop from an empty FIFO");
    end
  end
`endif
endmodule
