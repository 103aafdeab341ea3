// A scratchpad: one write port, one synchronous read port (data one cycle after the address),
// written as the pattern synthesis maps to block RAM. A read of the address written in the
// same cycle returns the old data; callers that need the new value forward it themselves.
module vacc_ram #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 16
) (
  input  logic             clk_i,
  input  logic             we_i,
  input  logic [$clog2(Depth)-1:0] waddr_i,
  input  logic [Width-1:0] wdata_i,
  input  logic             re_i,
  input  logic [$clog2(Depth)-1:0] raddr_i,
  output logic [Width-1:0] rdata_o
);
  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q;

  // Memory inference needs write and read in one process: the style guide's "only q <= d"
  // rule is relaxed for RAM arrays, which have no reset.
  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[waddr_i] <= wdata_i;
    if (re_i) rdata_q <= mem_q[raddr_i];
  end

  assign rdata_o = rdata_q;
endmodule
