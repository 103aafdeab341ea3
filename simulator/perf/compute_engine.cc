#include "compute_engine.h"

#include "burst_shape.h"

namespace vacc::sim::perf {

ComputeEngine::ComputeEngine(const isa::HwConfig &config, int bus_log2)
    : uop_ld_(log2_bytes(config.uop_bytes()), bus_log2),
      acc_ld_(log2_bytes(config.acc_tile_bytes()), bus_log2),
      uop_bank_(static_cast<size_t>(config.uop_depth()), 0) {}

ComputeEngine::Eval ComputeEngine::eval(const TimedInsn *head, bool l2c_avail, bool s2c_avail,
                                        bool c2l_full, bool c2s_full) const {
  Eval e;
  e.head = head;
  const bool valid = head != nullptr;
  const bool is_gemm = valid && head->kind == Kind::kGemm;
  const bool is_alu = valid && head->kind == Kind::kAlu;
  const bool is_load = valid && head->kind == Kind::kLoad;
  const bool is_finish = valid && head->kind == Kind::kFinish;
  const bool push_prev = valid && head->deps.push_prev, push_next = valid && head->deps.push_next;
  const bool one_bank = (is_gemm || is_alu) && head->overlap && head->uop_begin < head->uop_end;
  e.peek = one_bank && (is_gemm ? !gemm_.loop_valid() : is_alu && !alu_.loop_valid());
  e.head_banks = !one_bank ? 3 : static_cast<uint8_t>(1u << uop_bank_[head->uop_begin]);
  const bool pend_full = (push_prev && pending_[0].full()) || (push_next && pending_[1].full());
  const uint8_t gemm_work = gemm_.work(), alu_work = alu_.work();
  const bool gemm_drained = gemm_.drained(), alu_drained = alu_.drained();

  bool can_start, exec_done = true;
  if (is_gemm) {
    can_start = !gemm_.loop_valid() && (!one_bank || peek_valid_) &&
                (alu_work & e.head_banks) == 0 && (!(push_prev || push_next) || !pend_full);
  } else if (is_alu) {
    can_start = !alu_.loop_valid() && (!one_bank || peek_valid_) &&
                (gemm_work & e.head_banks) == 0 && (!(push_prev || push_next) || !pend_full);
  } else {
    can_start = gemm_drained && alu_drained;
  }
  if (is_load)
    exec_done = !uop_ld_.busy() && !acc_ld_.busy() && !pend_full;
  else if (is_finish)
    exec_done = !pend_full;
  const bool pop_prev = valid && head->deps.pop_prev, pop_next = valid && head->deps.pop_next;
  e.seq = seq_.eval(valid, can_start, (!pop_prev || l2c_avail) && (!pop_next || s2c_avail),
                    exec_done, /*room_ok=*/true);
  e.pop_prev = e.seq.start && pop_prev;
  e.pop_next = e.seq.start && pop_next;

  // Pending pushes whose work has ended go out (at most one per queue and cycle).
  if (!pending_[0].empty()) {
    const Pending &p = pending_[0].front();
    e.push_prev = gemm_ended_ >= p.gemm_need && alu_ended_ >= p.alu_need && !c2l_full;
  }
  if (!pending_[1].empty() && !c2s_full) {
    const Pending &p = pending_[1].front();
    const bool gemm_reached = gemm_ended_ >= p.gemm_need;
    const bool alu_reached = alu_ended_ >= p.alu_need;
    e.push_next = p.alu ? alu_reached && (gemm_reached || (gemm_work & p.banks) == 0)
                        : gemm_reached && (alu_reached || (alu_work & p.banks) == 0);
  }
  const bool pend_empty = pending_[0].empty() && pending_[1].empty();
  e.busy = e.seq.busy || !gemm_drained || !alu_drained || !pend_empty;
  e.stall = e.seq.stall && gemm_drained && alu_drained && pend_empty;
  e.idle = e.seq.idle && gemm_drained && alu_drained && pend_empty;
  return e;
}

void ComputeEngine::update(const Eval &e, uint64_t base, bool uop_ar_fire, bool uop_r_valid,
                           bool acc_ar_fire, bool acc_r_valid) {
  const TimedInsn *head = e.head;
  const TimedInsn *start = e.seq.start ? head : nullptr;
  const bool start_gemm = start && start->kind == Kind::kGemm;
  const bool start_alu = start && start->kind == Kind::kAlu;
  const bool unit_insn = head && (head->kind == Kind::kGemm || head->kind == Kind::kAlu);

  peek_valid_ = e.peek && !e.seq.retire;
  // Pending-push queues: out with this cycle's pushes, in with the hand-off or the retire.
  if (e.push_prev) pending_[0].pop();
  if (e.push_next) pending_[1].pop();
  if ((start_gemm || start_alu) || (e.seq.retire && !unit_insn)) {
    Pending p;
    p.alu = start_alu;
    p.banks = unit_insn ? e.head_banks : 3;
    p.gemm_need = gemm_issued_ + (start_gemm ? 1 : 0);
    p.alu_need = alu_issued_ + (start_alu ? 1 : 0);
    if (head->deps.push_prev) pending_[0].push(p);
    if (head->deps.push_next) pending_[1].push(p);
  }
  gemm_issued_ += start_gemm ? 1 : 0;
  alu_issued_ += start_alu ? 1 : 0;
  gemm_ended_ += gemm_.end_pulse() ? 1 : 0;
  alu_ended_ += alu_.end_pulse() ? 1 : 0;

  const bool start_load = start && start->kind == Kind::kLoad;
  const bool start_uop = start_load && start->mem == isa::MemId::kUop;
  uop_ld_.update(start_uop ? start : nullptr, base, uop_ar_fire, uop_r_valid);
  acc_ld_.update(start_load && !start_uop ? start : nullptr, base, acc_ar_fire, acc_r_valid);
  gemm_.update(start_gemm ? start : nullptr, e.head_banks);
  alu_.update(start_alu ? start : nullptr, e.head_banks);
  if (start && start->kind == Kind::kFinish) finish_ = true;
  seq_.update(e.seq);
}

}  // namespace vacc::sim::perf
