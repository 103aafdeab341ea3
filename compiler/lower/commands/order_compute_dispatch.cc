// The compute engine dispatches its GEMMs and ALUs in stream order, one at a time: a command
// waits until its unit is free and its tokens have arrived, and every later command waits
// behind it. With the overlap flag the GEMM core runs one thread's GEMM while the ALU works in
// the other thread's ACC bank, but only for as long as that GEMM lasts, and never in the
// GEMM's own bank. An ALU chain longer than the GEMM dispatched before it, an ALU on that
// GEMM's own bank, or a reset waiting for the store that empties its accumulators leaves the
// GEMM core idle: ResNet-18's convolutions with a fused residual add lost 4.4 k cycles per pair
// of tiles (a 396-cycle skip GEMM ahead of a 4 k-cycle chain), its stem with the fused max
// pool 3.7 k per pair (a thread's requantization queued behind its own GEMM, ahead of the
// other thread's pool). This pass, after stagger_threads and reset_on_alu, moves
//   - each GEMM down to just before its ACC bank's next GEMM (past the other bank's GEMMs),
//     so a thread's short skip GEMM and its convolution follow each other;
//   - each ALU reset (multiply by the immediate 0) that waits for a store down to just before
//     the first command it conflicts with, so that wait comes as late as it can (a reset that
//     waits only for ALUs stays early, beside the other thread's GEMM);
//   - each ALU and store below the next GEMM where that GEMM is of another bank and the GEMM
//     before cannot cover it: that GEMM is of its own bank, or the other bank's work between
//     the two GEMMs exceeds its cycles (what stays is what it covers);
//   - each store up to just after the last command it conflicts with, so the stores keep the
//     order of the ALUs they read (a flagged ALU's token vouches for its own bank only);
// each only past commands it does not conflict with (the footprints of footprint.h), so the
// stream keeps its meaning as a sequential program; insert_tokens derives the tokens after.
#include <algorithm>

#include "command_stream.h"

namespace vacc::lower {
namespace {

bool is_gemm_with_uops(const CodegenCommand &op) {
  return std::holds_alternative<isa::GemmCommand>(op.cmd) && !op.uops.empty();
}

// The cycles a GEMM or ALU keeps its unit busy (a vector ALU reads two operands per tile).
uint64_t busy_cycles(const CodegenCommand &op) {
  if (const auto *g = std::get_if<isa::GemmCommand>(&op.cmd))
    return uint64_t{g->loop_out} * g->loop_in * op.uops.size();
  if (const auto *a = std::get_if<isa::AluCommand>(&op.cmd))
    return uint64_t{a->loop_out} * a->loop_in * op.uops.size() * (a->use_imm ? 1 : 2);
  return 0;
}

}  // namespace

CodegenCommands order_compute_dispatch(const CodegenCommands &ops, const isa::HwConfig &config) {
  CommandStream s(ops);
  auto bank = [&](size_t i) { return config.acc_bank(s.op(i).uops.front().dst); };
  // Down: GEMMs, latest first, to just before their bank's next GEMM.
  for (size_t i = s.size(); i-- > 0;) {
    if (!is_gemm_with_uops(s.op(i))) continue;
    bool other_bank = false;
    size_t j = i + 1;
    for (; j < s.size() && j - i <= CommandStream::kMaxDistance && !s.conflicts(i, j); ++j) {
      if (!is_gemm_with_uops(s.op(j))) continue;
      if (bank(j) == bank(i)) break;
      other_bank = true;
    }
    if (other_bank && j < s.size() && is_gemm_with_uops(s.op(j)) && bank(j) == bank(i))
      s.move(i, j - 1);
  }
  // Down: resets that wait for a store (the nearest command above they conflict with), latest
  // first, to just before the first command they conflict with. The others stay early, where
  // the ALU runs them beside the other thread's GEMM.
  for (size_t i = s.size(); i-- > 0;) {
    if (!is_alu_reset(s.op(i))) continue;
    const int64_t barrier = s.barrier_above(i);
    if (barrier < 0 || !is_store(s.op(static_cast<size_t>(barrier)))) continue;
    size_t j = i + 1;
    while (j < s.size() && j - i < CommandStream::kMaxDistance && !s.conflicts(i, j)) ++j;
    s.move(i, j - 1);
  }
  // Down: ALUs and stores, latest first, below the next GEMM where that GEMM is another bank's
  // and the GEMM before them cannot cover them: it is their own bank's (which the ALU waits
  // for), or the other bank's work between the two GEMMs exceeds its cycles (what stays is
  // what it covers).
  auto acc_bank = [&](size_t i) {
    const CodegenCommand &op = s.op(i);
    return is_store(op) ? config.acc_bank(std::get<isa::DmaCommand>(op.cmd).sram) : bank(i);
  };
  for (size_t i = s.size(); i-- > 0;) {
    const CodegenCommand &op = s.op(i);
    const bool alu_work = std::holds_alternative<isa::AluCommand>(op.cmd) && !is_alu_reset(op);
    if (!alu_work && !is_store(op)) continue;
    const int own = acc_bank(i);
    size_t before = i, next = i + 1;
    while (before > 0 && !is_gemm_with_uops(s.op(before - 1))) --before;
    // The next GEMM of another bank (the ALU waits for any of its own).
    while (next < s.size() && next - i <= CommandStream::kMaxDistance &&
           !(is_gemm_with_uops(s.op(next)) && bank(next) != own))
      ++next;
    if (before == 0 || next >= s.size() || next - i > CommandStream::kMaxDistance) continue;
    const int above = bank(before - 1);
    uint64_t covered = 0;
    for (size_t k = before; k < s.size() && !is_gemm_with_uops(s.op(k)); ++k)
      if (!s.op(k).uops.empty() && bank(k) != above) covered += busy_cycles(s.op(k));
    if ((own == above || covered > busy_cycles(s.op(before - 1))) && s.passes(i, next))
      s.move(i, next);
  }
  // Up: stores, earliest first, to just after the last command they conflict with (past other
  // stores), so the stores follow the order of the ALUs they read. A flagged ALU's token to the
  // store engine vouches for its own bank only (isa/README.md, "Overlap"): a store behind
  // another bank's store whose ALU came later would find its own ALU covered by no token.
  for (size_t i = 0; i < s.size(); ++i)
    if (is_store(s.op(i))) s.move(i, static_cast<size_t>(s.barrier_above(i) + 1));
  return s.take();
}

}  // namespace vacc::lower
