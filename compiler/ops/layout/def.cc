// vacc.PackNCHWnc and vacc.UnpackNCHWnc: the blocked layout's packers
// (graph/blocked_layout.h) as graph operators.
#include "graph/registry/families.h"
#include "vacc/graph/blocked_layout.h"

namespace vacc::graph::ops {

Outputs pack_nchwnc(const Node &node, const Inputs &in) {
  Outputs outs;
  const int64_t bn = node.attrs.get_int("block_n"), bc = node.attrs.get_int("block_c");
  if (node.attrs.has("kernel_shape"))
    outs.push_back(block_tensor(unfold_windows(*in[0], node.attrs), bn, bc));
  else
    outs.push_back(block_tensor(*in[0], bn, bc));
  return outs;
}

Outputs unpack_nchwnc(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(unblock_tensor(*in[0], node.attrs.get_ints("shape")));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

void infer_pack(Node &n) {
  Value &x = input_of(n, 0, "x");
  if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
  int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
  set_out(n, 0, x.dtype, blocked_shape(unfolded_shape(x.shape, n.attrs), bn, bc));
  if (n.outputs[0]) n.outputs[0]->layout = {true, int(bn), int(bc)};
}

void infer_unpack(Node &n) {
  Value &x = input_of(n, 0, "x");
  Shape out = n.attrs.get_ints("shape");
  int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
  if (out.size() + 2 != x.shape.size() || x.shape[x.rank() - 2] != bn || x.shape.back() != bc) {
    fail("input {} is not a blocked form of {}", shape_str(x.shape), shape_str(out));
  }
  set_out(n, 0, x.dtype, out);
}

}  // namespace

void add_layout_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kPackNCHWnc,
                  .name = "vacc.PackNCHWnc",
                  .infer = infer_pack,
                  .reference = pack_nchwnc});
  defs.push_back({.op = OpKind::kUnpackNCHWnc,
                  .name = "vacc.UnpackNCHWnc",
                  .infer = infer_unpack,
                  .reference = unpack_nchwnc});
}

}  // namespace vacc::graph::ops
