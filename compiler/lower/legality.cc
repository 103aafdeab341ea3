#include "vacc/lower/legality.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "lower/ops/node_mapping.h"
#include "vacc/lower/host_layout.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

std::string no_intrinsic(graph::OpKind op) {
  return fmt::format("{} has no accelerator intrinsic", graph::op_name(op));
}

}  // namespace

std::optional<Layer> layer_of(const graph::Node &node, const isa::HwConfig &c, std::string *why) {
  const NodeMapping *m = node_mapping(node.op);
  if (!m) return reject(why, no_intrinsic(node.op));
  return m->layer_of(node, c, why);
}

bool has_accelerator_layer(graph::OpKind op) {
  return node_mapping(op) != nullptr;
}

std::optional<std::string> why_not_accelerated(const graph::Node &node, const isa::HwConfig &c,
                                               int vthreads) {
  const NodeMapping *m = node_mapping(node.op);
  if (!m) return no_intrinsic(node.op);
  if (c.inp_bits != 8 || c.wgt_bits != 8 || c.acc_bits != 32)
    return fmt::format(
        "the config's widths (inp {}, wgt {}, acc {}) are not the quantizer's int8/int8/int32",
        c.inp_bits, c.wgt_bits, c.acc_bits);
  // The quantizer's outputs are int8: clip bounds outside it are not its semantics.
  if (node.attrs.get_int("clip_min", -128) < -128 || node.attrs.get_int("clip_max", 127) > 127)
    return std::string("clip bounds outside int8");
  if (m->refuses)
    if (std::optional<std::string> reason = m->refuses(node)) return reason;
  std::string why;
  const std::optional<Layer> layer = layer_of(node, c, &why);
  if (!layer) return why;
  try {
    std::visit(
        [&](const auto &p) {
          check_supported(c, p, layer->name);
          default_schedule(c, p, vthreads, layer->name);
        },
        layer->params);
  } catch (const Error &e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

graph::AccelLegality accel_legality(const isa::HwConfig &config, int vthreads) {
  return [config, vthreads](const graph::Node &node) {
    return why_not_accelerated(node, config, vthreads);
  };
}

}  // namespace vacc::lower
