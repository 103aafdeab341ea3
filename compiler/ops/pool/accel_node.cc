// MaxPool and vacc.QAveragePool of int8 tensors as the accelerator's pool layer (PoolParams):
// the window and its padding, the averaging's scale and whether the input is known
// non-negative (which lets a max pool pad with zeros).
#include <algorithm>

#include "lower/ops/node_mapping.h"
#include "vacc/lower/host_layout.h"

namespace vacc::lower {
namespace {

// Whether `v` holds no negative value: the output of an operator that clips at 0 or above (a
// fused ReLU), of a Relu, or of a pool, relabelling or layout transform of such a value.
bool nonnegative(const graph::Value *v, int depth = 0) {
  const graph::Node *p = v ? v->producer : nullptr;
  if (!p || depth > 32) return false;
  switch (p->op) {
    case graph::OpKind::kQConv:
    case graph::OpKind::kQDense:
    case graph::OpKind::kRequantize:
    case graph::OpKind::kQAveragePool:
      return p->attrs.get_int(p->input(3) ? "residual_clip_min" : "clip_min", -128) >= 0;
    case graph::OpKind::kQAdd:
      return p->attrs.get_int("clip_min", -128) >= 0;
    case graph::OpKind::kRelu:
      return true;
    case graph::OpKind::kMaxPool:
    case graph::OpKind::kPackNCHWnc:
    case graph::OpKind::kUnpackNCHWnc:
    case graph::OpKind::kFlatten:
    case graph::OpKind::kReshape:
      return nonnegative(p->inputs[0], depth + 1);
    default:
      return false;
  }
}

// A pool's window attributes and explicit padding (pads, or auto_pad from its shapes); false
// when a window attribute is not 2-D or the pool is dilated.
bool pool_window(const graph::Node &node, PoolParams *p, std::string *why) {
  const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attrs.get_ints("strides", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2) {
    if (why) *why = "only 2-D pools map to the accelerator";
    return false;
  }
  for (int64_t d : node.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) {
      if (why) *why = "dilated pooling";
      return false;
    }
  p->kernel_h = kernel[0];
  p->kernel_w = kernel[1];
  p->stride_h = strides[0];
  p->stride_w = strides[1];
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = node.attrs.get_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) {
      if (why) *why = "only 2-D pools map to the accelerator";
      return false;
    }
    p->pad_top = pads[0];
    p->pad_left = pads[1];
    p->pad_bottom = pads[2];
    p->pad_right = pads[3];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t th =
        std::max<int64_t>(0, (p->out_height - 1) * p->stride_h + p->kernel_h - p->height);
    const int64_t tw =
        std::max<int64_t>(0, (p->out_width - 1) * p->stride_w + p->kernel_w - p->width);
    const bool upper = auto_pad == "SAME_UPPER";
    p->pad_top = upper ? th / 2 : th - th / 2;
    p->pad_left = upper ? tw / 2 : tw - tw / 2;
    p->pad_bottom = th - p->pad_top;
    p->pad_right = tw - p->pad_left;
  }
  return true;
}

std::optional<Layer> pool2d_layer_of(const graph::Node &node, const isa::HwConfig &c,
                                     std::string *why) {
  const bool blocked = node.inputs[0] && node.inputs[0]->layout.blocked;
  const graph::Value *x = node.inputs[0], *y = node.outputs[0];
  const int spatial_rank = blocked ? 6 : 4;
  if (x->rank() != spatial_rank || y->rank() != spatial_rank)
    return reject(why, "only 2-D pools map to the accelerator");
  if (x->dtype != graph::DType::kInt8) return reject(why, "a pool of a float input");
  if (node.outputs.size() > 1 && node.outputs[1]) return reject(why, "MaxPool's Indices output");
  PoolParams p;
  p.kind = node.op == graph::OpKind::kMaxPool ? PoolParams::Kind::kMax : PoolParams::Kind::kAverage;
  const Dims in = dims_of(*x, c.batch, c.block_out);
  p.batch = in.n;
  p.channels = in.c;
  p.height = x->shape[2];
  p.width = x->shape[3];
  p.out_height = y->shape[2];
  p.out_width = y->shape[3];
  if (!pool_window(node, &p, why)) return std::nullopt;
  p.input_nonnegative = nonnegative(x);
  p.count_include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  p.scale_bits = static_cast<int>(node.attrs.get_int("scale_bits", 0));
  p.rshift = static_cast<int>(node.attrs.get_int("rshift", 1));
  p.clip_min = node.attrs.get_int("clip_min", -128);
  p.clip_max = node.attrs.get_int("clip_max", 127);
  return Layer{node.name, p};
}

}  // namespace

NodeMapping pool2d_node_mapping() {
  return {{graph::OpKind::kMaxPool, graph::OpKind::kQAveragePool}, pool2d_layer_of};
}

}  // namespace vacc::lower
