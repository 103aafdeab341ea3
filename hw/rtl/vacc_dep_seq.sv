// The dependency-token protocol of one engine (isa/README.md): the head instruction waits for
// the tokens it pops, executes, then waits until the queues it pushes to have room, pushes and
// retires. Pops happen in the cycle the instruction starts, pushes in the cycle it retires.
// halt_i (an aborted run) stops new instructions from starting; one that runs completes.
module vacc_dep_seq (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic clr_i,
  input  logic halt_i,
  // Head of the engine's instruction queue.
  input  logic valid_i,
  input  logic pop_prev_i,
  input  logic pop_next_i,
  input  logic push_prev_i,
  input  logic push_next_i,
  input  logic can_start_i,  // the engine can accept the head instruction now
  // Token queues.
  input  vacc_pkg::tok_state_t tok_i,
  output vacc_pkg::tok_ctrl_t tok_o,
  // Execution.
  output logic start_o,      // the head instruction starts this cycle
  input  logic exec_done_i,  // it has finished executing (looked at from the next cycle on)
  output logic retire_o,     // pop the instruction queue
  // Status for the counters and the run controller.
  output vacc_pkg::engine_status_t status_o
);
  logic exec_d, exec_q;
  logic tokens_ok, room_ok;

  assign tokens_ok = (!pop_prev_i || tok_i.prev_avail) && (!pop_next_i || tok_i.next_avail);
  assign room_ok = (!push_prev_i || !tok_i.prev_full) && (!push_next_i || !tok_i.next_full);

  always_comb begin
    start_o = 1'b0;
    retire_o = 1'b0;
    exec_d = exec_q;
    if (!exec_q) begin
      if (valid_i && !halt_i && can_start_i && tokens_ok) begin
        start_o = 1'b1;
        exec_d = 1'b1;
      end
    end else if (exec_done_i && room_ok) begin
      retire_o = 1'b1;
      exec_d = 1'b0;
    end
    if (clr_i) begin
      start_o = 1'b0;
      retire_o = 1'b0;
      exec_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) exec_q <= 1'b0;
    else exec_q <= exec_d;
  end

  assign tok_o.pop_prev = start_o && pop_prev_i;
  assign tok_o.pop_next = start_o && pop_next_i;
  assign tok_o.push_prev = retire_o && push_prev_i;
  assign tok_o.push_next = retire_o && push_next_i;

  assign status_o.busy = exec_q && !exec_done_i;
  assign status_o.stall = (!exec_q && valid_i && !halt_i && can_start_i && !tokens_ok) ||
                          (exec_q && exec_done_i && !room_ok);
  assign status_o.quiet = !exec_q || exec_done_i;
  assign status_o.idle = !exec_q && !valid_i;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      SeqRetireOnlyValid: assert (!(retire_o && !valid_i))
        else $error("%m: retiring with an empty instruction queue");
      SeqPopOnlyAvail: assert (!(tok_o.pop_prev && !tok_i.prev_avail) &&
                               !(tok_o.pop_next && !tok_i.next_avail))
        else $error("%m: popping an absent token");
      SeqPushOnlyRoom: assert (!(tok_o.push_prev && tok_i.prev_full) &&
                               !(tok_o.push_next && tok_i.next_full))
        else $error("%m: pushing a token into a full queue");
    end
  end
`endif
endmodule
