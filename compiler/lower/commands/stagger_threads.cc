// Staggering of virtual threads, on a command stream without tokens (insert_tokens.cc adds
// them afterwards from the scratchpad conflicts). inject_virtual_threads interleaves the
// threads in lockstep: each round ends with every thread's requantization (ALU) and starts
// with every thread's accumulator reset, so the stores of all threads sit between two
// rounds' GEMMs; and the load engine receives thread 0's weights behind thread 1's inputs,
// which wait for thread 1's GEMMs. This pass
//   - moves each ALU and compute-engine LOAD ACC up to just after the last command it
//     conflicts with, and each GEMM reset down to just before the first one, so a thread's
//     requantization and store overlap the other thread's GEMMs;
//   - moves each store up to just after the ALUs it reads, then each GEMM up past what it
//     does not conflict with (never above another GEMM), so the GEMM core always has its next
//     work queued ahead of the other thread's ALU chain, which runs beside it (the overlap
//     flag, isa/README.md);
//   - moves each LOAD INP/WGT up past commands it does not conflict with, but not above a
//     load that can start no later than itself (one whose own last conflict is not later),
//     so a thread's loads stay together and in order and do not queue behind another
//     thread's.
// Commands only pass commands they do not conflict with (overlapping scratchpad ranges, one
// side writing), so the stream keeps its meaning as a sequential program.
#include "command_stream.h"

namespace vacc::lower {
namespace {

constexpr size_t kMaxDistance = CommandStream::kMaxDistance;

bool hoistable(const CodegenCommand &op) {
  if (std::holds_alternative<isa::AluCommand>(op.cmd)) return true;
  const auto *d = std::get_if<isa::DmaCommand>(&op.cmd);
  return d && !d->store && d->mem == isa::MemId::kAcc;
}

bool is_gemm_reset(const CodegenCommand &op) {
  const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
  return g && g->reset;
}

bool is_gemm(const CodegenCommand &op) {
  return std::holds_alternative<isa::GemmCommand>(op.cmd);
}

// Reorders each run of consecutive `member` commands so that the members the `consumer`
// commands after the run conflict with come in the consumers' order. A member keeps every
// member of the run it conflicts with before it, so the run computes the same.
//   - ALUs by the stores that read them: a tile's first channel block is stored right after
//     its own requantization instead of after the whole tile's;
//   - loads by the GEMMs that read them: while the pipeline fills, the first GEMM's operands
//     arrive first instead of behind the other thread's inputs.
void order_runs_by_consumers(CommandStream &s, bool (*member)(const CodegenCommand &),
                             bool (*consumer)(const CodegenCommand &)) {
  for (size_t begin = 0; begin < s.size();) {
    size_t end = begin;
    while (end < s.size() && member(s.op(end))) ++end;
    if (end - begin < 2) {
      begin = end + 1;
      continue;
    }
    const size_t n = end - begin;
    std::vector<size_t> order;
    std::vector<bool> placed(n, false);
    // Places run member k after the members before it that it conflicts with.
    auto place = [&](auto &&self, size_t k) -> void {
      if (placed[k]) return;
      for (size_t j = 0; j < k; ++j)
        if (!placed[j] && s.conflicts(begin + j, begin + k)) self(self, j);
      placed[k] = true;
      order.push_back(k);
    };
    for (size_t i = end; i < s.size() && i - end <= kMaxDistance && order.size() < n; ++i) {
      if (!consumer(s.op(i))) continue;
      for (size_t k = 0; k < n; ++k)
        if (s.conflicts(begin + k, i)) place(place, k);
    }
    for (size_t k = 0; k < n; ++k) place(place, k);
    s.permute(begin, order);
    begin = end + 1;
  }
}

bool is_alu(const CodegenCommand &op) {
  return std::holds_alternative<isa::AluCommand>(op.cmd);
}

}  // namespace

CodegenCommands stagger_threads(const CodegenCommands &input) {
  CommandStream s(input);
  // Up: ALUs and LOAD ACC, earliest first (so a chain of ALUs keeps its order).
  for (size_t i = 0; i < s.size(); ++i)
    if (hoistable(s.op(i))) s.move(i, static_cast<size_t>(s.barrier_above(i) + 1));
  order_runs_by_consumers(s, &is_alu, &is_store);
  // Down: GEMM resets, latest first.
  for (size_t i = s.size(); i-- > 0;)
    if (is_gemm_reset(s.op(i))) s.move(i, s.barrier_below(i) - 1);
  // Up: loads, earliest first, never above a load that is ready no later.
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_operand_load(s.op(i))) continue;
    const int64_t b = s.barrier_above(i);
    int64_t to = b + 1;
    for (int64_t j = static_cast<int64_t>(i) - 1; j > b; --j) {
      if (is_operand_load(s.op(j)) && s.barrier_above(static_cast<size_t>(j)) <= b) {
        to = j + 1;
        break;
      }
    }
    s.move(i, static_cast<size_t>(to));
  }
  // Up: stores, earliest first, to just after the requantization they read (never above
  // another store); then GEMMs, resets included, earliest first, past everything they do
  // not conflict with (never above another GEMM). One thread's ALU chain and store then sit
  // right after the other thread's next GEMM, which the ALU runs beside (the overlap flag),
  // and the thread's next reset follows its store instead of waiting behind the other
  // thread's ALU chain in the compute engine's in-order queue.
  auto hoist = [&](bool (*kind)(const CodegenCommand &)) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (!kind(s.op(i))) continue;
      int64_t to = s.barrier_above(i) + 1;
      for (int64_t j = static_cast<int64_t>(i) - 1; j >= to; --j)
        if (kind(s.op(static_cast<size_t>(j)))) {
          to = j + 1;
          break;
        }
      s.move(i, static_cast<size_t>(to));
    }
  };
  hoist(&is_store);
  hoist(&is_gemm);
  order_runs_by_consumers(s, &is_operand_load, &is_gemm);
  return s.take();
}

}  // namespace vacc::lower
