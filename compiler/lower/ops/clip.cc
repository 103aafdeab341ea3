#include "clip.h"

#include "vacc/isa/insn.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

bool fused_clip(const isa::HwConfig &c, int64_t lo, int64_t hi) {
  return c.alu_clip && isa::clip_bound_fits(lo) && isa::clip_bound_fits(hi);
}

std::vector<ClipStep> clip_steps(const isa::HwConfig &c, int64_t lo, int64_t hi,
                                 tir::DataType t) {
  const tir::Expr low = tir::make_const(t, lo), high = tir::make_const(t, hi);
  if (fused_clip(c, lo, hi))
    return {{"clip", [=](tir::Expr x) { return tir::min(tir::max(x, low), high); }}};
  return {{"clip_lo", [=](tir::Expr x) { return tir::max(x, low); }},
          {"clip_hi", [=](tir::Expr x) { return tir::min(x, high); }}};
}

}  // namespace vacc::lower
