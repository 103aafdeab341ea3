// vacc.QAdd as the accelerator's add layer (AddParams): shapes, shifts and clip bounds.
#include "lower/ops/node_mapping.h"
#include "vacc/lower/host_layout.h"

namespace vacc::lower {
namespace {

std::optional<Layer> add_layer_of(const graph::Node &node, const isa::HwConfig &c,
                                  std::string *why) {
  const bool blocked = node.inputs[0] && node.inputs[0]->layout.blocked;
  const graph::Value *x = node.inputs[0], *y = node.outputs[0];
  const int spatial_rank = blocked ? 6 : 4;
  if (x->rank() != spatial_rank || y->rank() != spatial_rank)
    return reject(why, "only NCHW tensors map to the accelerator's add");
  AddParams p;
  const Dims in = dims_of(*x, c.batch, c.block_out);
  p.batch = in.n;
  p.channels = in.c;
  p.height = x->shape[2];
  p.width = x->shape[3];
  p.lshift_a = static_cast<int>(node.attrs.get_int("lshift_a", 0));
  p.lshift_b = static_cast<int>(node.attrs.get_int("lshift_b", 0));
  p.rshift = static_cast<int>(node.attrs.get_int("rshift", 0));
  p.clip_min = node.attrs.get_int("clip_min", -128);
  p.clip_max = node.attrs.get_int("clip_max", 127);
  return Layer{node.name, p};
}

}  // namespace

NodeMapping add_node_mapping() {
  return {{graph::OpKind::kQAdd}, add_layer_of};
}

}  // namespace vacc::lower
