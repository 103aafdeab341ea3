// Lowering of a package's accelerator steps to command lists: every vacc.QConv, vacc.QDense
// and vacc.QAdd becomes a conv2d / dense / add operator of codegen/accel (its default
// schedule, the tensor compiler's pass pipeline, code generation), serialized into the
// package with its DRAM buffers bound to the step's tensors: (data, weight, bias[, shifts],
// out) for conv and dense, with the bias and per-channel shifts broadcast to the operator's
// [N/B, O/BO, B, BO] layout as new constant tensors; (a, b, identity weight, out) for add.
//
// A step the accelerator operators do not cover (asymmetric padding, a requantization the
// ALU cannot express, a config the add cannot use) moves to the CPU, with the reason in its
// note: the host runs the same integer semantics (docs/quantization.md) on the blocked
// layout, so results do not change.
#pragma once

#include <functional>
#include <string>

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"

namespace vacc::package {

struct LowerOptions {
  int vthreads = 2;
  // When set, the loop IR after every pass of every accelerator layer is written under
  // DIR/<NN>_<layer>/ (the tensor compiler pipeline's dump).
  std::string dump_dir;
  std::function<void(const std::string &)> log;  // one line per layer, with its time
};

struct LowerStats {
  int lowered = 0;       // steps with a command list
  int moved_to_cpu = 0;  // accelerator steps the operators do not cover
  double milliseconds = 0;
};

// `graph` is the compiled graph `package` was made from (node i is step i).
LowerStats lower_accel_steps(const graph::Graph &graph, const isa::HwConfig &config,
                             isa::Package &package, const LowerOptions &options = {});

}  // namespace vacc::package
