// With extensions.gemm_assign a GEMM can write its products instead of adding them, so an
// accumulator needs no reset: this pass drops each reset GEMM whose tiles the next command on
// them, a GEMM, writes exactly once each (a reduction of one step per tile, as a 1x1
// convolution over one input block), and makes that GEMM an assign GEMM: the same values, one
// cycle per tile less on the unit that zeroed them (the ALU, after reset_on_alu).
// A first GEMM that writes a tile more than once (the taps of a 3x3 window) keeps its reset:
// splitting it into an assign GEMM of its first micro-ops and a GEMM of the others measured
// slower on ResNet-18's residual convolutions (+1.1 % cycles), where the resets ran on the ALU
// beside the GEMM core for free, and split only in streams whose ALU is the busier unit it
// gained MobileNetV2 0.15 %.
#include <set>

#include "codegen_commands.h"
#include "footprint.h"

namespace vacc::lower {
namespace {

constexpr size_t kResetLookahead = 1024;  // commands looked ahead of a reset for its first GEMM

// Every ACC index a GEMM writes, one entry per (iteration, micro-op).
std::vector<uint32_t> acc_writes(const isa::GemmCommand &g, const isa::UopKernel &uops) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < g.loop_out; ++i)
    for (uint32_t j = 0; j < g.loop_in; ++j)
      for (const isa::Uop &u : uops) out.push_back(u.dst + i * g.acc.out + j * g.acc.in);
  return out;
}

// Whether `op`, the first command on a reset's tiles `zeroed`, is a GEMM writing each of them
// exactly once and nothing else.
bool writes_each_once(const CodegenCommand &op, const std::set<uint32_t> &zeroed) {
  const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
  if (!g || g->reset || g->assign) return false;
  const std::vector<uint32_t> writes = acc_writes(*g, op.uops);
  const std::set<uint32_t> once(writes.begin(), writes.end());
  return once.size() == writes.size() && once == zeroed;
}

}  // namespace

CodegenCommands assign_first_gemms(const CodegenCommands &ops) {
  CodegenCommands out = ops;
  std::vector<bool> dropped(ops.size(), false);
  for (size_t r = 0; r < out.size(); ++r) {
    const auto *reset = std::get_if<isa::GemmCommand>(&out[r].cmd);
    if (!reset || !reset->reset) continue;
    const Footprint zero = footprint(out[r]);
    const std::vector<uint32_t> w = acc_writes(*reset, out[r].uops);
    const std::set<uint32_t> zeroed(w.begin(), w.end());
    for (size_t k = r + 1; k < out.size() && k <= r + kResetLookahead; ++k) {
      if (!conflict(zero, footprint(out[k]))) continue;
      if (writes_each_once(out[k], zeroed)) {
        std::get<isa::GemmCommand>(out[k].cmd).assign = true;
        dropped[r] = true;
      }
      break;
    }
  }
  CodegenCommands kept;
  kept.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(out[i]));
  return kept;
}

}  // namespace vacc::lower
