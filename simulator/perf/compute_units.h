// The compute engine's two units (hw/rtl/vacc_compute.sv): each runs vacc_uop_loop's nest of
// micro-op iterations and carries every iteration down its pipeline, with the ACC banks of its
// instruction, so the engine can tell which banks a unit still has work on.
//   GEMM: one iteration per cycle; P0 loop, P1 INP/WGT read, P2 products, P3 adder tree,
//         P4 accumulate (the instruction's end: its last iteration leaves P4).
//   ALU:  one iteration per cycle with an immediate operand, else one per two cycles (the
//         alu_gap register); P0 loop, P1 src read, P2 dst read, P3 write. A holding ALU
//         (extensions.alu_hold) reads src once: after its first iteration, one per cycle.
#pragma once

#include <cstdint>

#include "timed_program.h"

namespace vacc::sim::perf {

// vacc_uop_loop: `active` while iterations remain (valid_o); `done` pulses the cycle after the
// last iteration was consumed, or after the start of an empty nest.
struct UopLoop {
  bool active = false, done = false;
  uint64_t left = 0;

  void update(const TimedInsn *start, bool step) {
    bool active_d = active;
    if (start) {
      active_d = start->iterations != 0;
      left = start->iterations;
    } else if (step && active) {
      if (--left == 0) active_d = false;
    }
    done = (start != nullptr || active) && !active_d;
    active = active_d;
  }
};

// A unit's pipeline behind its loop: stage s holds an iteration (valid), the banks of its
// instruction, and whether it closes the instruction (the loop's done pulse riding along).
template <int Stages>
struct UnitPipeline {
  bool valid[Stages] = {};
  uint8_t banks[Stages] = {};
  bool done[Stages] = {};  // done[0] is unused: the pulse enters at the second stage

  bool any() const {
    for (int s = 0; s < Stages; ++s)
      if (valid[s]) return true;
    return false;
  }
  uint8_t work() const {
    uint8_t w = 0;
    for (int s = 0; s < Stages; ++s) w |= valid[s] ? banks[s] : 0;
    return w;
  }
  bool end_pulse() const { return done[Stages - 1]; }
  bool any_done() const {
    for (int s = 0; s < Stages; ++s)
      if (done[s]) return true;
    return false;
  }
  template <typename Pattern>
  bool steady(uint8_t b, Pattern pattern) const {
    for (int s = 0; s < Stages; ++s)
      if (valid[s] != pattern(s) || (valid[s] && banks[s] != b)) return false;
    return !any_done();
  }
  void shift(bool step, uint8_t loop_banks, bool loop_done) {
    for (int s = Stages - 1; s > 0; --s) {
      valid[s] = valid[s - 1];
      banks[s] = banks[s - 1];
      done[s] = s == 1 ? loop_done : done[s - 1];
    }
    valid[0] = step;
    banks[0] = loop_banks;
  }
};

class GemmUnit {
 public:
  bool loop_valid() const { return loop_.active; }
  bool step() const { return loop_.active; }  // gemm_busy: an iteration enters the core
  bool accumulates() const { return !reset_; }
  bool drained() const { return !loop_.active && !pipe_.any(); }
  uint8_t work() const { return (loop_.active ? banks_ : 0) | pipe_.work(); }
  bool end_pulse() const { return pipe_.end_pulse(); }  // g4_done_q
  // Fast-forward: cycles from now in which the unit only streams iterations (the pipeline
  // full, the loop neither starting nor ending), kForever when idle, 0 otherwise.
  uint64_t quiet_cycles() const {
    if (!loop_.active) return pipe_.any() || pipe_.any_done() || loop_.done ? 0 : kForever;
    if (loop_.done || !pipe_.steady(banks_, [](int) { return true; })) return 0;
    return loop_.left - 1;
  }
  void advance(uint64_t k) {
    if (loop_.active) loop_.left -= k;
  }

  void update(const TimedInsn *start, uint8_t head_banks) {
    pipe_.shift(step(), banks_, loop_.done);
    if (start) {
      reset_ = start->reset;
      banks_ = head_banks;
    }
    loop_.update(start, step());
  }

 private:
  UopLoop loop_;
  bool reset_ = false;
  uint8_t banks_ = 3;
  UnitPipeline<4> pipe_;  // P1..P4
};

class AluUnit {
 public:
  bool loop_valid() const { return loop_.active; }
  // Issues an iteration every cycle: an immediate operand, or a held one after the first.
  bool every_cycle() const { return use_imm_ || held_; }
  bool step() const { return loop_.active && (!gap_ || use_imm_ || held_); }
  bool drained() const { return !loop_.active && !pipe_.any(); }
  uint8_t work() const { return (loop_.active ? banks_ : 0) | pipe_.work(); }
  bool end_pulse() const { return pipe_.end_pulse(); }  // a3_done_q

  // Fast-forward, as GemmUnit's. A vector operation alternates issue and gap cycles, so it
  // skips an even number of cycles (the pipeline then looks as it does now).
  uint64_t quiet_cycles() const {
    if (!loop_.active) return pipe_.any() || pipe_.any_done() || loop_.done ? 0 : kForever;
    if (loop_.done) return 0;
    if (use_imm_ || held_) {
      if (!gap_ || !pipe_.steady(banks_, [](int) { return true; })) return 0;
      return loop_.left - 1;
    }
    const bool g = gap_;
    if (!pipe_.steady(banks_, [g](int s) { return s % 2 == 0 ? g : !g; })) return 0;
    return 2 * (loop_.left - 1);
  }
  // Iterations issued in the next `k` quiet cycles.
  uint64_t steps_in(uint64_t k) const {
    if (!loop_.active) return 0;
    return use_imm_ || held_ ? k : (gap_ ? k / 2 : (k + 1) / 2);
  }
  void advance(uint64_t k) { loop_.left -= steps_in(k); }

  void update(const TimedInsn *start, uint8_t head_banks) {
    const bool s = step();
    pipe_.shift(s, banks_, loop_.done);
    gap_ = s;
    held_ = held_ || (s && hold_);
    if (start) {
      use_imm_ = start->use_imm;
      hold_ = start->hold;
      held_ = false;
      banks_ = head_banks;
    }
    loop_.update(start, s);
  }

 private:
  UopLoop loop_;
  bool use_imm_ = false, gap_ = false;
  bool hold_ = false, held_ = false;  // alu_hold_q, alu_held_q
  uint8_t banks_ = 3;
  UnitPipeline<3> pipe_;  // P1..P3
};

}  // namespace vacc::sim::perf
