// The clip every ALU chain ends with, before the narrowed output: min(max(x, lo), hi). Where
// the config has extensions.alu_clip and both bounds fit CLIP's 8-bit halves it is one step
// (one CLIP, isa/README.md), else two (MAX then MIN): the same values either way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/tir/node.h"

namespace vacc::lower {

struct ClipStep {
  std::string name;                          // the stage's name: "clip", "clip_lo", "clip_hi"
  std::function<tir::Expr(tir::Expr)> value;  // the stage's value from the previous stage's
};

bool fused_clip(const isa::HwConfig &config, int64_t lo, int64_t hi);
std::vector<ClipStep> clip_steps(const isa::HwConfig &config, int64_t lo, int64_t hi,
                                 tir::DataType type);

}  // namespace vacc::lower
