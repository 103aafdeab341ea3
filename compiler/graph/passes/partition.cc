#include "vacc/graph/passes/partition.h"

#include <fmt/format.h>

namespace vacc::graph {

namespace {
bool reject(std::string *why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

bool shifts_ok(const Node &node, const isa::HwConfig &config, std::string *why) {
  for (int64_t s : node.attrs.get_ints("shifts", {0})) {
    if (s < 0 || s >= config.acc_bits) {
      return reject(why, fmt::format("shift {} outside [0, {}) of the ALU", s, config.acc_bits));
    }
  }
  return true;
}

bool clip_ok(const Node &node, std::string *why) {
  if (node.attrs.get_int("clip_min", -128) < -128 || node.attrs.get_int("clip_max", 127) > 127) {
    return reject(why, "clip bounds outside int8");
  }
  return true;
}
}  // namespace

bool accelerator_supports(const Node &node, const isa::HwConfig &config, std::string *why) {
  if (node.op != OpKind::kQConv && node.op != OpKind::kQDense && node.op != OpKind::kQAdd) {
    return reject(why, fmt::format("{} has no accelerator intrinsic", op_name(node.op)));
  }
  if (config.inp_bits != 8 || config.wgt_bits != 8 || config.acc_bits != 32) {
    return reject(why, fmt::format("the config's widths (inp {}, wgt {}, acc {}) are not the "
                                   "quantizer's int8/int8/int32",
                                   config.inp_bits, config.wgt_bits, config.acc_bits));
  }
  if (node.op == OpKind::kQAdd) {
    for (const char *key : {"lshift_a", "lshift_b", "rshift"}) {
      int64_t s = node.attrs.get_int(key, 0);
      if (s < 0 || s >= config.acc_bits)
        return reject(why, fmt::format("{} {} out of range", key, s));
    }
    return clip_ok(node, why);
  }
  if (!node.inputs[1]->is_constant()) return reject(why, "weights are not constant");
  if (node.op == OpKind::kQConv) {
    const Value *w = node.inputs[1];
    if (node.inputs[0]->rank() != 4 && !node.inputs[0]->layout.blocked) {
      return reject(why, "only 2-D convolutions map to the GEMM core");
    }
    if (node.attrs.get_int("group", 1) != 1) return reject(why, "grouped convolution");
    for (int64_t d : node.attrs.get_ints("dilations", {1, 1})) {
      if (d != 1) return reject(why, "dilated convolution");
    }
    int64_t taps = w->shape[w->rank() - (w->layout.blocked ? 4 : 2)] *
                   w->shape[w->rank() - (w->layout.blocked ? 3 : 1)];
    if (taps > config.wgt_depth()) {
      return reject(why, fmt::format("{} kernel taps exceed the weight buffer ({} tiles)", taps,
                                     config.wgt_depth()));
    }
  }
  return shifts_ok(node, config, why) && clip_ok(node, why);
}

int partition(Graph &graph, const isa::HwConfig &config) {
  int accel = 0;
  for (Node *node : graph.nodes()) {
    node->target = accelerator_supports(*node, config) ? Target::kAccel : Target::kCpu;
    accel += node->target == Target::kAccel;
  }
  return accel;
}

}  // namespace vacc::graph
