#include "machine.h"

#include <fmt/format.h>

#include <algorithm>

#include "burst_shape.h"
#include "compute_engine.h"
#include "fetch.h"
#include "load_engine.h"
#include "memory_system.h"
#include "store_engine.h"
#include "vacc/support/error.h"

namespace vacc::sim::perf {
namespace {

// The device-memory base the model addresses from: 4 KiB aligned like the RTL simulator's
// (only an address's offset inside its page and bus word shapes the bursts).
constexpr uint64_t kBase = 0x1'0000'0000ull;

// Token queues (vacc_token_queue) by the pair of engines they connect.
enum TokenQueue { kLoadToCompute, kComputeToLoad, kComputeToStore, kStoreToCompute };

class Machine {
 public:
  Machine(const isa::HwConfig &c, const TimedProgram &p, uint64_t insn_offset,
          const TimingOptions &o)
      : config_(c),
        program_(p),
        insn_offset_(insn_offset),
        options_(o),
        bus_log2_(log2_bytes(static_cast<uint64_t>(c.bus_bits / 8))),
        memory_(c, o.max_outstanding),
        fetch_(bus_log2_),
        load_(c, bus_log2_),
        compute_(c, bus_log2_),
        store_(c, bus_log2_),
        readers_{&fetch_.dma(), &load_.inp().dma(), &load_.wgt().dma(), &compute_.uop_load().dma(),
                 &compute_.acc_load().dma()},
        loads_{nullptr, &load_.inp(), &load_.wgt(), &compute_.uop_load(), &compute_.acc_load()} {
    const size_t n = p.insns.size();
    r_.start.assign(n, kNotRun);
    r_.end.assign(n, kNotRun);
    r_.unit_start.assign(n, kNotRun);
    r_.unit_end.assign(n, kNotRun);
  }

  TimingResult run();

 private:
  // Every decision of one cycle, taken from that cycle's registers.
  struct Wires {
    LoadEngine::Eval le;
    ComputeEngine::Eval ce;
    StoreEngine::Eval se;
    bool core_done = false;
    bool dispatched = false;
    int target = 0;
    bool r_valid[kNumClients] = {}, r_ready[kNumClients] = {};
    int captured = -1;
    uint32_t captured_beats = 0;
    bool aw_fire = false, w_fire = false, b_valid = false;
    bool inp_load_we = false;  // the load engine writes INP (a STORE INP waits)
  };

  const TimedInsn *head(int engine) const {
    if (pushed_[engine] == popped_[engine]) return nullptr;
    return &program_.insns[program_.order[engine][popped_[engine]]];
  }
  uint32_t head_index(int engine) const { return program_.order[engine][popped_[engine]]; }
  bool avail(TokenQueue q) const { return tokens_[q] > 0; }
  bool full(TokenQueue q) const { return tokens_[q] == config_.token_queue_depth; }
  static void count_token(int64_t &n, bool push, bool pop) { n += (push ? 1 : 0) - (pop ? 1 : 0); }

  Wires eval() const;
  // Adds `k` cycles with these wires to the counters.
  void count(const Wires &w, uint64_t k);
  void trace(const Wires &w, uint64_t t);
  void update(const Wires &w, uint64_t t);
  // Cycles from `t` in which nothing happens but what advance() applies in one go: units
  // streaming iterations, a burst streaming in, latencies running out. 0: step this cycle.
  uint64_t quiet_cycles(const Wires &w, uint64_t t) const;
  void advance(const Wires &w, uint64_t t, uint64_t k);
  void load_uop_banks(const TimedInsn &load);
  [[noreturn]] void fail_deadlock(uint64_t cycles, bool limit) const;

  const isa::HwConfig &config_;
  const TimedProgram &program_;
  const uint64_t insn_offset_;
  const TimingOptions options_;
  const int bus_log2_;

  MemorySystem memory_;
  Fetch fetch_;
  LoadEngine load_;
  ComputeEngine compute_;
  StoreEngine store_;
  DmaReader *const readers_[kNumClients];        // by read client
  MemLoad *const loads_[kNumClients];            // the LOAD each reader serves (none for fetch)
  std::array<uint64_t, 3> pushed_{}, popped_{};  // per engine instruction queue
  std::array<int64_t, 4> tokens_{};
  uint64_t gemms_ended_ = 0, alus_ended_ = 0;
  TimingResult r_;
};

TimingResult Machine::run() {
  const uint64_t limit = options_.cycle_limit;
  for (uint64_t t = 1;;) {
    if (limit != 0 && t > limit) fail_deadlock(limit, true);
    const Wires w = eval();
    if (options_.fast_forward) {
      uint64_t k = quiet_cycles(w, t);
      if (k == kForever) fail_deadlock(t - 1, false);
      if (limit != 0) k = std::min(k, limit + 1 - t);
      if (k >= 2) {
        count(w, k);
        advance(w, t, k);
        t += k;
        continue;
      }
    }
    ++r_.stepped_cycles;
    count(w, 1);
    if (w.core_done) {
      r_.cycles = t;
      break;
    }
    trace(w, t);
    update(w, t);
    ++t;
  }
  const MemoryCounters &m = memory_.counters();
  r_.read_bursts = m.read_bursts;
  r_.read_beats = m.read_beats;
  r_.write_bursts = m.write_bursts;
  r_.write_beats = m.write_beats;
  const isa::MemId mems[kNumClients] = {isa::MemId::kOut, isa::MemId::kInp, isa::MemId::kWgt,
                                        isa::MemId::kUop, isa::MemId::kAcc};
  for (int c = kInpClient; c < kNumClients; ++c)
    r_.loaded_elements[static_cast<int>(mems[c])] = readers_[c]->elements_emitted();
  r_.stored_elements = store_.elements_stored();
  r_.stored_inp_elements = store_.elements_stored_inp();
  for (int e = 0; e < 3; ++e) r_.insns[e] = popped_[e];
  return std::move(r_);
}

Machine::Wires Machine::eval() const {
  // The engines' decisions are built in place (copying these structs of flags right after
  // writing them byte by byte stalled the store-to-load forwarding on every cycle).
  Wires w{.le = load_.eval(head(0), avail(kComputeToLoad), full(kLoadToCompute)),
          .ce = compute_.eval(head(1), avail(kLoadToCompute), avail(kStoreToCompute),
                              full(kComputeToLoad), full(kComputeToStore)),
          .se = store_.eval(head(2), avail(kComputeToStore), full(kStoreToCompute))};
  // vacc_control: the run ends in the first cycle the core is done (FINISH executed, every
  // instruction dispatched, every engine idle); that cycle still counts.
  w.core_done = compute_.finished() && fetch_.done() && w.le.seq.idle && w.ce.idle && w.se.seq.idle;
  // vacc_fetch dispatches its head unless the target queue is full.
  if (fetch_.has_head()) {
    w.target = static_cast<int>(program_.insns[fetch_.head()].engine);
    w.dispatched =
        pushed_[w.target] - popped_[w.target] < static_cast<uint64_t>(config_.insn_queue_depth);
  }
  // Read requests, their arbitration, and read data routing.
  bool ar_valid[kNumClients];
  for (int c = 0; c < kNumClients; ++c) {
    ar_valid[c] = readers_[c]->ar_valid(c == kFetchClient ? fetch_.space() : ~uint64_t{0});
    w.r_valid[c] = memory_.r_valid(c);
    w.r_ready[c] = readers_[c]->r_ready();
  }
  w.captured = memory_.arbitrate(ar_valid);
  if (w.captured >= 0) w.captured_beats = readers_[w.captured]->burst_beats();
  w.aw_fire = w.se.aw_valid && memory_.aw_ready();
  w.w_fire = w.se.w_valid && memory_.w_ready();
  w.b_valid = memory_.b_valid();
  w.inp_load_we = store_.writes_inp() && load_.inp().writes();  // asked only by STORE INP
  return w;
}

void Machine::count(const Wires &w, uint64_t k) {
  r_.busy[0] += k * w.le.seq.busy;
  r_.stall[0] += k * w.le.seq.stall;
  r_.busy[1] += k * w.ce.busy;
  r_.stall[1] += k * w.ce.stall;
  r_.busy[2] += k * w.se.seq.busy;
  r_.stall[2] += k * w.se.seq.stall;
  const GemmUnit &g = compute_.gemm();
  r_.gemm_busy += k * g.step();
  r_.gemm_mac_uops += k * (g.step() && g.accumulates());
  r_.alu_steps += compute_.alu().steps_in(k);
}

void Machine::trace(const Wires &w, uint64_t t) {
  const DepSeq::Wires *seqs[3] = {&w.le.seq, &w.ce.seq, &w.se.seq};
  for (int e = 0; e < 3; ++e) {
    if (seqs[e]->start) r_.start[head_index(e)] = t;
    if (seqs[e]->retire) r_.end[head_index(e)] = t;
  }
  if (w.ce.seq.start && (w.ce.head->kind == Kind::kGemm || w.ce.head->kind == Kind::kAlu))
    r_.unit_start[head_index(1)] = t;
  if (compute_.gemm().end_pulse()) r_.unit_end[program_.gemms[gemms_ended_++]] = t;
  if (compute_.alu().end_pulse()) r_.unit_end[program_.alus[alus_ended_++]] = t;
}

void Machine::update(const Wires &w, uint64_t t) {
  fetch_.update(t == 1, kBase, insn_offset_, static_cast<uint32_t>(program_.insns.size()),
                w.captured == kFetchClient, w.r_valid[kFetchClient], w.dispatched);
  if (w.dispatched) ++pushed_[w.target];
  popped_[0] += w.le.seq.retire;
  popped_[1] += w.ce.seq.retire;
  popped_[2] += w.se.seq.retire;
  count_token(tokens_[kLoadToCompute], w.le.push_next, w.ce.pop_prev);
  count_token(tokens_[kComputeToLoad], w.ce.push_prev, w.le.pop_next);
  count_token(tokens_[kComputeToStore], w.ce.push_next, w.se.pop_prev);
  count_token(tokens_[kStoreToCompute], w.se.push_prev, w.ce.pop_next);
  if (w.ce.seq.start && w.ce.head->kind == Kind::kLoad && w.ce.head->mem == isa::MemId::kUop)
    load_uop_banks(*w.ce.head);
  load_.update(w.le, kBase, w.captured == kInpClient, w.r_valid[kInpClient],
               w.captured == kWgtClient, w.r_valid[kWgtClient]);
  compute_.update(w.ce, kBase, w.captured == kUopClient, w.r_valid[kUopClient],
                  w.captured == kAccClient, w.r_valid[kAccClient]);
  store_.update(w.se, kBase, w.aw_fire, w.w_fire, w.b_valid, w.inp_load_we);
  memory_.update(t, w.captured, w.captured_beats, w.r_ready, w.aw_fire, w.se.aw_beats, w.w_fire);
}

uint64_t Machine::quiet_cycles(const Wires &w, uint64_t t) const {
  // Anything that changes a queue, a token, a handshake or an engine's state: step. So does
  // cycle 1, in which fetch starts (vacc_control's go).
  if (t == 1) return 0;
  const DepSeq::Wires *seqs[3] = {&w.le.seq, &w.ce.seq, &w.se.seq};
  for (const DepSeq::Wires *s : seqs)
    if (s->start || s->retire) return 0;
  if (w.core_done || w.dispatched || w.ce.push_prev || w.ce.push_next || w.aw_fire || w.b_valid ||
      !compute_.steady(w.ce) || !memory_.ar_quiet(w.captured))
    return 0;
  uint64_t k = kForever;
  // Write data: the store engine may stream beats out (then no read beat may move).
  const bool write_stream = w.w_fire;
  if (write_stream) {
    k = std::min(store_.stream_cycles(w.se, memory_.aw_blocked()), memory_.write_stream_cycles());
    if (k < store_.beats_per_elem() || !memory_.reads_waiting()) return 0;
  } else if (!store_.quiet() || !memory_.writes_idle()) {
    return 0;
  }
  // Read data: one client may take a burst streaming in; nothing else may move.
  const int stream = write_stream ? -1 : memory_.streaming_client();
  if (stream > kFetchClient && readers_[stream]->can_stream() && !loads_[stream]->padding()) {
    k = memory_.stream_beats_left() - 1;
  } else if (!memory_.reads_waiting()) {
    return 0;
  } else {
    k = std::min(k, memory_.read_wait(t));
  }
  for (int c = 0; c < kNumClients; ++c) {
    if (c == stream) continue;
    if (!readers_[c]->waiting(w.r_valid[c])) return 0;
    if (c != kFetchClient && loads_[c]->padding()) return 0;
  }
  k = std::min(
      {k, memory_.response_wait(t), compute_.gemm().quiet_cycles(), compute_.alu().quiet_cycles()});
  // A vector ALU alternates issue and gap cycles: skip whole pairs.
  // Whole element periods of a write stream; whole issue/gap pairs of a vector ALU.
  if (write_stream) k -= k % store_.beats_per_elem();
  if (compute_.alu().loop_valid() && !compute_.alu().every_cycle() && k != kForever) k -= k % 2;
  return k;
}

void Machine::advance(const Wires &w, uint64_t t, uint64_t k) {
  const int stream = w.w_fire ? -1 : memory_.streaming_client();
  const bool streaming = stream > kFetchClient;
  if (streaming) readers_[stream]->advance_stream(k);
  if (w.w_fire) store_.advance_stream(k);
  memory_.advance(t, k, streaming, w.w_fire);
  compute_.gemm().advance(k);
  compute_.alu().advance(k);
}

// LOAD UOP writes micro-ops; the model keeps the ACC bank of each one's dst.
void Machine::load_uop_banks(const TimedInsn &load) {
  const uint64_t n = uint64_t{load.y_size} * load.x_size;
  for (uint64_t k = 0; k < n; ++k)
    compute_.set_uop_bank(static_cast<uint32_t>(load.sram_base + k),
                          program_.uop_banks[load.uop_banks_at + k]);
}

void Machine::fail_deadlock(uint64_t cycles, bool limit) const {
  std::string waiting;
  for (int e = 0; e < 3; ++e) {
    if (!head(e)) continue;
    const uint32_t i = head_index(e);
    waiting += fmt::format("; {} engine at instruction {} ({}, {})",
                           isa::engine_name(static_cast<isa::Engine>(e)), i,
                           isa::insn_label(program_.decoded[i]),
                           r_.start[i] == kNotRun ? "not started" : "started, not retired");
  }
  if (limit)
    fail(
        "deadlock: the accelerator did not finish within the cycle limit of {} cycles (raise it "
        "with --cycle-limit if the program is just long){}",
        cycles, waiting);
  fail("deadlock: the accelerator can make no more progress after {} cycles{}", cycles, waiting);
}

}  // namespace

TimingResult run_timing(const isa::HwConfig &config, const TimedProgram &program,
                        uint64_t insn_offset, const TimingOptions &options) {
  Machine m(config, program, insn_offset, options);
  return m.run();
}

}  // namespace vacc::sim::perf
