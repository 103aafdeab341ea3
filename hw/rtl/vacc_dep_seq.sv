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
  input  logic prev_avail_i,
  input  logic next_avail_i,
  input  logic prev_full_i,
  input  logic next_full_i,
  output logic tok_pop_prev_o,
  output logic tok_pop_next_o,
  output logic tok_push_prev_o,
  output logic tok_push_next_o,
  // Execution.
  output logic start_o,      // the head instruction starts this cycle
  input  logic exec_done_i,  // it has finished executing (looked at from the next cycle on)
  output logic retire_o,     // pop the instruction queue
  // Status for the counters and the run controller.
  output logic busy_o,   // executing
  output logic stall_o,  // the head instruction waits for a token or for room to push one
  output logic quiet_o,  // nothing in flight: not in the middle of an execution
  output logic idle_o    // no instruction at all
);
  logic exec_d, exec_q;
  logic tokens_ok, room_ok;

  assign tokens_ok = (!pop_prev_i || prev_avail_i) && (!pop_next_i || next_avail_i);
  assign room_ok = (!push_prev_i || !prev_full_i) && (!push_next_i || !next_full_i);

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

  assign tok_pop_prev_o = start_o && pop_prev_i;
  assign tok_pop_next_o = start_o && pop_next_i;
  assign tok_push_prev_o = retire_o && push_prev_i;
  assign tok_push_next_o = retire_o && push_next_i;

  assign busy_o = exec_q && !exec_done_i;
  assign stall_o = (!exec_q && valid_i && !halt_i && can_start_i && !tokens_ok) ||
                   (exec_q && exec_done_i && !room_ok);
  assign quiet_o = !exec_q || exec_done_i;
  assign idle_o = !exec_q && !valid_i;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !clr_i) begin
      SeqRetireOnlyValid: assert (!(retire_o && !valid_i))
        else $error("%m: retiring with an empty instruction queue");
      SeqPopOnlyAvail: assert (!(tok_pop_prev_o && !prev_avail_i) &&
                               !(tok_pop_next_o && !next_avail_i))
        else $error("%m: popping an absent token");
      SeqPushOnlyRoom: assert (!(tok_push_prev_o && prev_full_i) &&
                               !(tok_push_next_o && next_full_i))
        else $error("%m: pushing a token into a full queue");
    end
  end
`endif
endmodule
