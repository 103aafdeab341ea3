// A dependency-token queue between two engines. Tokens carry no data, so the queue is a
// counter of Depth tokens; push and pop may happen in the same cycle.
module vacc_token_queue #(
  parameter int unsigned Depth = 256
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic push_i,
  input  logic pop_i,
  output logic full_o,
  output logic avail_o  // at least one token
);
  localparam int unsigned CountW = $clog2(Depth + 1);
  logic [CountW-1:0] count_d, count_q;

  always_comb begin
    count_d = count_q;
    if (clr_i) count_d = '0;
    else if (push_i && !pop_i) count_d = count_q + 1'b1;
    else if (pop_i && !push_i) count_d = count_q - 1'b1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) count_q <= '0;
    else count_q <= count_d;
  end

  assign full_o = (32'(count_q) == Depth);
  assign avail_o = (count_q != '0);

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      TokenNoPushWhenFull: assert (!(push_i && full_o && !pop_i))
        else $error("%m: token pushed into a full queue");
      TokenNoPopWhenEmpty: assert (!(pop_i && !avail_o))
        else $error("%m: token popped from an empty queue");
    end
  end
`endif
endmodule
